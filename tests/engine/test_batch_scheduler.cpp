// Continuous batching (engine/serve/batch_scheduler.h): many requests of different lengths, queued beyond the
// slots, prompts chunked over several steps, each producing what a plain Generator produces; prefix reuse and its
// least-recently-used eviction; the queue bound; cancellation queued, running and from the token callback; end
// conditions; the serving thread; refusals. On a tiny random GPT-2 with the 512-token test tokenizer.
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <map>
#include <thread>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/model_loader.h"
#include "engine/serve/batch_scheduler.h"
#include "support/tiny_text_model.h"

using namespace engine;

namespace {

GenerateParams greedy(int n) {
  GenerateParams p;
  p.max_tokens = n;
  p.sampler.temperature = 0;
  p.stop_at_eos = false;
  p.top_logprobs = 2;  // to see how close the runner-up was
  return p;
}

// Batched steps stack rows through the multi-row kernels, so logits may differ from a lone sequence's in the
// last bits: tokens must agree up to the first position where the reference's top two were within 1e-3 (a tie
// that rounding may break either way), and every token's logprob within 1e-4.
QString mismatch(const GenerationResult& got, const GenerationResult& want) {
  for (size_t i = 0; i < want.tokens.size(); ++i) {
    const GeneratedToken& w = want.tokens[i];
    if (w.top.size() == 2 && w.top[0].logprob - w.top[1].logprob < 1e-3f) return {};
    if (i >= got.tokens.size()) return QStringLiteral("ended early at token %1").arg(i);
    if (got.tokens[i].id != w.id) return QStringLiteral("token %1: %2, want %3").arg(i).arg(got.tokens[i].id).arg(w.id);
    if (std::abs(got.tokens[i].logprob - w.logprob) > 1e-4f) return QStringLiteral("token %1: logprob differs").arg(i);
  }
  if (got.tokens.size() != want.tokens.size()) return QStringLiteral("token count differs");
  if (got.text != want.text) return QStringLiteral("text differs");
  if (got.finish != want.finish) return QStringLiteral("finish differs");
  return {};
}

std::vector<int32_t> prompt_of(int n, int salt) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(int32_t((i * 37 + salt * 101 + 7) % 500));
  return p;
}

// Steps until nothing is left; fails the test if it does not settle.
void drain(BatchScheduler& s) {
  for (int i = 0; i < 100000 && s.step(); ++i) {
  }
  QCOMPARE(s.counters().running + s.counters().queued, 0);
}

}  // namespace

class TestBatchScheduler : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  std::unique_ptr<Model> m_model;
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

  GenerationResult reference(const std::vector<int32_t>& prompt, const GenerateParams& p) {
    Generator gen(*m_model, *m_be);
    return gen.generate(prompt, p);
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    writeTinyTextModel(m_dir.path() + QStringLiteral("/m"), 11, 96);
    m_model = load_model((m_dir.path() + QStringLiteral("/m")).toStdString());
  }

  void many_requests_each_equal_a_plain_generator() {
    BatchSchedulerOptions o;
    o.parallel = 3;
    o.prefill_budget = 16;  // the 40-token prompts take three steps, beside running decodes
    BatchScheduler s(*m_model, *m_be, o);
    const std::vector<std::pair<int, int>> shapes = {{5, 20}, {40, 12}, {1, 30}, {17, 1}, {40, 25}, {9, 0}, {3, 18}};
    std::map<uint64_t, GenerationResult> done;
    std::map<size_t, std::string> streamed;
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const uint64_t id = s.submit(
          prompt_of(shapes[i].first, int(i)), greedy(shapes[i].second),
          [&, i](const GeneratedToken&, const std::string& text) {
            streamed[i] += text;
            return true;
          },
          [&, i](const GenerationResult& r) {
            QVERIFY2(!done.count(i + 1), "a request ended twice");
            done[i + 1] = r;
          });
      QVERIFY(id > 0);
      ids.push_back(id);
    }
    QCOMPARE(s.counters().queued, int(shapes.size()));  // nothing runs before the first step
    drain(s);
    QCOMPARE(int(done.size()), int(shapes.size()));
    for (size_t i = 0; i < shapes.size(); ++i) {
      const GenerationResult want = reference(prompt_of(shapes[i].first, int(i)), greedy(shapes[i].second));
      const GenerationResult& got = done[i + 1];
      const QString why = mismatch(got, want);
      QVERIFY2(why.isEmpty(), qPrintable(QStringLiteral("request %1: ").arg(i) + why));
      QCOMPARE(got.stats.prompt_tokens, shapes[i].first);
      QCOMPARE(got.stats.prefill_tokens, shapes[i].first);  // nothing shared with an earlier prompt
      QCOMPARE(got.stats.generated_tokens, shapes[i].second);
      QCOMPARE(streamed[i], got.text);
    }
    const SchedulerCounters c = s.counters();
    QCOMPARE(c.completed, int64_t(shapes.size()));
    QCOMPARE(c.generated_tokens, int64_t(20 + 12 + 30 + 1 + 25 + 0 + 18));
    // Batching means far fewer steps than tokens: at most the longest request's tokens plus the prefill chunks
    // and the waits for a slot.
    QVERIFY2(c.steps < 20 + 12 + 30 + 1 + 25 + 18, qPrintable(QString::number(c.steps)));
  }

  void a_shared_prefix_is_reused_and_the_least_recently_used_slot_is_evicted() {
    BatchSchedulerOptions o;
    o.parallel = 2;
    BatchScheduler s(*m_model, *m_be, o);
    GenerationResult last;
    auto run = [&](const std::vector<int32_t>& prompt) {
      QVERIFY(s.submit(prompt, greedy(6), {}, [&](const GenerationResult& r) { last = r; }) > 0);
      drain(s);
    };
    std::vector<int32_t> system = prompt_of(30, 3), a = system, b = system;
    a.push_back(5);
    b.insert(b.end(), {6, 7, 8});
    run(a);
    QCOMPARE(last.stats.prefill_tokens, 31);
    run(b);  // shares 30 tokens with a's slot
    QCOMPARE(last.stats.prefill_tokens, 3);
    QVERIFY(mismatch(last, reference(b, greedy(6))).isEmpty());
    QCOMPARE(s.counters().reused_prompt_tokens, int64_t(30));
    // The same prompt again: all but the last token come from the cache.
    run(b);
    QCOMPARE(last.stats.prefill_tokens, 1);
    QVERIFY(mismatch(last, reference(b, greedy(6))).isEmpty());
    // Two unrelated prompts fill both slots; b's slot was used last, so a's (older) is evicted first, and b's
    // prefix survives for a later request.
    run(prompt_of(10, 8));
    QCOMPARE(last.stats.prefill_tokens, 10);
    std::vector<int32_t> b2 = b;
    b2.push_back(9);
    run(b2);
    QCOMPARE(last.stats.prefill_tokens, 1);
  }

  void the_queue_is_bounded_and_busy_is_counted() {
    BatchSchedulerOptions o;
    o.parallel = 1;
    o.max_queue = 2;
    BatchScheduler s(*m_model, *m_be, o);
    int ended = 0;
    for (int i = 0; i < 3; ++i) QVERIFY(s.submit(prompt_of(4, i), greedy(3), {}, [&](auto&) { ++ended; }) > 0);
    QCOMPARE(s.submit(prompt_of(4, 9), greedy(3), {}, [&](auto&) { ++ended; }), uint64_t(0));
    QCOMPARE(s.counters().rejected_busy, int64_t(1));
    drain(s);
    QCOMPARE(ended, 3);
    QVERIFY(s.submit(prompt_of(4, 9), greedy(3), {}, [&](auto&) { ++ended; }) > 0);  // room again
    drain(s);
    QCOMPARE(ended, 4);
  }

  void cancel_queued_running_and_from_the_callback() {
    BatchSchedulerOptions o;
    o.parallel = 1;
    BatchScheduler s(*m_model, *m_be, o);
    std::map<int, GenerationResult> r;
    const uint64_t running = s.submit(prompt_of(5, 1), greedy(50), {}, [&](auto& x) { r[0] = x; });
    const uint64_t queued = s.submit(prompt_of(5, 2), greedy(50), {}, [&](auto& x) { r[1] = x; });
    int seen = 0;
    s.submit(prompt_of(5, 3), greedy(50), [&](const GeneratedToken&, const std::string&) { return ++seen < 4; },
             [&](auto& x) { r[2] = x; });
    for (int i = 0; i < 5; ++i) QVERIFY(s.step());
    QVERIFY(s.cancel(running));
    QVERIFY(s.cancel(queued));
    QVERIFY(!s.cancel(queued));  // once
    QVERIFY(!s.cancel(12345));
    drain(s);
    QCOMPARE(r[0].finish, FinishReason::Cancelled);
    QCOMPARE(int(r[0].tokens.size()), 5);  // the prompt step and four decode steps ran before the cancel
    QCOMPARE(r[1].finish, FinishReason::Cancelled);
    QCOMPARE(int(r[1].tokens.size()), 0);
    QCOMPARE(r[2].finish, FinishReason::Cancelled);
    QCOMPARE(int(r[2].tokens.size()), 4);
    QVERIFY(!s.cancel(running));
  }

  void stop_strings_eos_and_a_full_slot_end_requests_like_the_generator() {
    const std::vector<int32_t> prompt = prompt_of(6, 4);
    const GenerationResult free_run = reference(prompt, greedy(30));
    QVERIFY(free_run.text.size() > 8);
    GenerateParams stop = greedy(30);
    stop.stop = {free_run.text.substr(free_run.text.size() / 2, 2)};
    BatchSchedulerOptions o;
    o.parallel = 2;
    o.slot_capacity = 40;
    BatchScheduler s(*m_model, *m_be, o);
    QCOMPARE(s.slot_capacity(), 40);
    std::map<int, GenerationResult> r;
    s.submit(prompt, stop, {}, [&](auto& x) { r[0] = x; });
    s.submit(prompt, greedy(100), {}, [&](auto& x) { r[1] = x; });
    drain(s);
    QVERIFY(mismatch(r[0], reference(prompt, stop)).isEmpty());
    QCOMPARE(r[0].finish, FinishReason::Stop);
    QCOMPARE(r[1].finish, FinishReason::ContextFull);
    QCOMPARE(int(r[1].tokens.size()), 40 - 6 + 1);  // the last token is sampled but has no room to be fed
  }

  void the_serving_thread_ends_every_request_exactly_once() {
    BatchSchedulerOptions o;
    o.parallel = 2;
    BatchScheduler s(*m_model, *m_be, o);
    std::thread loop([&] { s.run(); });
    std::atomic<int> ended{0}, complete{0};
    std::mutex mu;
    std::condition_variable cv;
    for (int i = 0; i < 6; ++i)
      QVERIFY(s.submit(prompt_of(8, i), greedy(i < 4 ? 5 : 100000), {}, [&](const GenerationResult& r) {
        complete += r.finish == FinishReason::Length;
        ++ended;
        cv.notify_all();
      }) > 0);
    {
      std::unique_lock lock(mu);
      QVERIFY(cv.wait_for(lock, std::chrono::seconds(60), [&] { return complete.load() == 4; }));
    }
    s.stop();  // the two long ones are still running
    loop.join();
    QCOMPARE(ended.load(), 6);
    QCOMPARE(complete.load(), 4);
  }

  void refusals() {
    BatchScheduler s(*m_model, *m_be);
    auto refused = [&](std::vector<int32_t> prompt, GenerateParams p) {
      try {
        s.submit(std::move(prompt), p, {}, {});
      } catch (const Error& e) {
        return QString::fromUtf8(e.what());
      }
      return QString();
    };
    QVERIFY(refused({}, greedy(3)).contains(QStringLiteral("empty")));
    QVERIFY(refused(prompt_of(97, 1), greedy(3)).contains(QStringLiteral("slot holds 96")));
    QVERIFY(refused({1, 512}, greedy(3)).contains(QStringLiteral("outside the vocabulary")));
    GenerateParams bias = greedy(3);
    bias.sampler.logit_bias = {{600, 1.f}};
    QVERIFY(refused({1}, bias).contains(QStringLiteral("logit bias")));
    QCOMPARE(s.counters().queued, 0);
    BatchSchedulerOptions bad;
    bad.parallel = 0;
    QVERIFY_THROWS_EXCEPTION(Error, BatchScheduler(*m_model, *m_be, bad));
  }
};

QTEST_GUILESS_MAIN(TestBatchScheduler)
#include "test_batch_scheduler.moc"
