// Generation: greedy decode against step-by-step full forwards, seeds, stop strings, streaming
// hold-back, prefix reuse, cancellation, EOS and context limits, on the tiny fixture GPT-2 with a
// small byte-level vocabulary built here (256 byte tokens, <|endoftext|>, 255 letter-pair merges).
#include <QtTest>

#include <cmath>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/model_loader.h"

using namespace engine;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

// GPT-2's byte -> printable code point table, written out from its definition.
std::string byte_char(int b) {
  static std::vector<int> cp = [] {
    std::vector<int> m(256, -1);
    for (int c = '!'; c <= '~'; ++c) m[c] = c;
    for (int c = 0xA1; c <= 0xAC; ++c) m[c] = c;
    for (int c = 0xAE; c <= 0xFF; ++c) m[c] = c;
    int n = 0;
    for (int c = 0; c < 256; ++c)
      if (m[c] < 0) m[c] = 256 + n++;
    return m;
  }();
  const int c = cp[b];
  std::string s;
  if (c < 0x80) s += char(c);
  else {
    s += char(0xC0 | (c >> 6));
    s += char(0x80 | (c & 0x3F));
  }
  return s;
}

std::unique_ptr<Tokenizer> tiny_tokenizer() {
  std::string vocab = "{", merges = "#version: 0.2\n";
  auto add = [&](const std::string& piece, int id) {
    if (vocab.size() > 1) vocab += ",";
    std::string esc;
    for (char ch : piece) {
      if (ch == '"' || ch == '\\') esc += '\\';
      esc += ch;
    }
    vocab += "\"" + esc + "\":" + std::to_string(id);
  };
  for (int b = 0; b < 256; ++b) add(byte_char(b), b);
  add("<|endoftext|>", 256);
  int id = 257;
  for (char a = 'a'; a <= 'z' && id < 512; ++a)
    for (char b = 'a'; b <= 'z' && id < 512; ++b) {
      add(std::string(1, a) + b, id++);
      merges += std::string(1, a) + " " + b + "\n";
    }
  vocab += "}";
  return Tokenizer::from_gpt2_strings(vocab, merges);
}

std::unique_ptr<Model> tiny_model() {
  auto m = load_model(kTiny);
  m->set_tokenizer(tiny_tokenizer());
  return m;
}

GenerateParams greedy(int n) {
  GenerateParams p;
  p.max_tokens = n;
  p.sampler.temperature = 0;
  p.stop_at_eos = false;
  return p;
}

}  // namespace

class TestGenerator : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void greedy_matches_full_forward_argmax() {
    auto model = tiny_model();
    std::vector<int32_t> seq = {10, 20, 30};
    Generator gen(*model, *m_be);
    const GenerationResult r = gen.generate(seq, greedy(12));
    QCOMPARE(int(r.tokens.size()), 12);
    // Reference: a fresh full forward over the growing sequence, argmax of the last row each time.
    Runner runner(*model, *m_be);
    for (int i = 0; i < 12; ++i) {
      KVCache cache(model->config(), int(seq.size()));
      auto logits = runner.forward(seq, cache);
      const int32_t best = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      QCOMPARE(r.tokens[i].id, best);
      // The reported logprob is the raw log-softmax at that position.
      double mx = *std::max_element(logits.begin(), logits.end()), z = 0;
      for (float v : logits) z += std::exp(double(v) - mx);
      QVERIFY(std::abs(r.tokens[i].logprob - (logits[best] - mx - std::log(z))) < 1e-4);
      seq.push_back(best);
    }
    QCOMPARE(r.stats.generated_tokens, 12);
    QCOMPARE(r.stats.prompt_tokens, 3);
    QVERIFY(r.stats.time_to_first_token_ms > 0);
  }

  void seeds_reproduce() {
    auto model = tiny_model();
    GenerateParams p;
    p.max_tokens = 20;
    p.stop_at_eos = false;
    p.sampler.temperature = 1.5f;
    p.sampler.top_k = 0;
    p.sampler.top_p = 1.0f;
    p.sampler.min_p = 0.0f;
    const std::vector<int32_t> prompt = {1, 2, 3};
    auto run = [&](uint64_t seed) {
      Generator gen(*model, *m_be);
      p.sampler.seed = seed;
      std::vector<int32_t> ids;
      for (auto& t : gen.generate(prompt, p).tokens) ids.push_back(t.id);
      return ids;
    };
    QCOMPARE(run(42), run(42));
    QVERIFY(run(42) != run(43));
  }

  void stop_string_cuts_text_and_streams_consistently() {
    auto model = tiny_model();
    const std::vector<int32_t> prompt = {100, 101, 102};
    Generator gen(*model, *m_be);
    const std::string free_text = gen.generate(prompt, greedy(30)).text;
    QVERIFY(free_text.size() > 6);
    const std::string stop = free_text.substr(free_text.size() / 2, 3);
    GenerateParams p = greedy(30);
    p.stop = {stop};
    std::string streamed;
    const GenerationResult r = gen.generate(prompt, p, [&](const GeneratedToken&, const std::string& t) {
      streamed += t;
      return true;
    });
    QCOMPARE(r.finish, FinishReason::Stop);
    QCOMPARE(r.text, free_text.substr(0, free_text.find(stop)));
    QCOMPARE(streamed, r.text);
    QVERIFY(r.text.find(stop) == std::string::npos);
  }

  void earliest_of_several_stop_strings_wins() {
    auto model = tiny_model();
    const std::vector<int32_t> prompt = {100, 101, 102};
    Generator gen(*model, *m_be);
    const std::string free_text = gen.generate(prompt, greedy(30)).text;
    QVERIFY(free_text.size() > 8);
    // A later-starting stop listed first must not hide an earlier-starting one that ends later.
    const size_t mid = free_text.size() / 2;
    const std::string late = free_text.substr(mid, 2), early = free_text.substr(mid - 2, 4);
    GenerateParams p = greedy(30);
    p.stop = {late, early};
    const GenerationResult r = gen.generate(prompt, p);
    QCOMPARE(r.finish, FinishReason::Stop);
    QCOMPARE(r.text, free_text.substr(0, std::min(free_text.find(late), free_text.find(early))));
  }

  void stream_hold_back_table() {
    QCOMPARE(stream_safe_length("hello", {}), size_t(5));
    QCOMPARE(stream_safe_length("hello wor", {"world"}), size_t(6));  // "wor" may become "world"
    QCOMPARE(stream_safe_length("hello w", {"xyz", "wx"}), size_t(6));
    QCOMPARE(stream_safe_length("abc\xE2\x82", {}), size_t(3));      // incomplete euro sign
    QCOMPARE(stream_safe_length("abc\xE2\x82\xAC", {}), size_t(6));  // complete
    QCOMPARE(stream_safe_length("ab\xF0\x9F", {}), size_t(2));       // half an emoji
  }

  void prefix_reuse_gives_same_result() {
    auto model = tiny_model();
    Generator warm(*model, *m_be);
    const std::vector<int32_t> a = {5, 6, 7, 8, 9, 10};
    std::vector<int32_t> ab = a;
    ab.insert(ab.end(), {11, 12, 13});
    warm.generate(a, greedy(4));
    const GenerationResult reused = warm.generate(ab, greedy(8));
    QCOMPARE(reused.stats.prefill_tokens, 3);  // only the new suffix was computed
    Generator fresh(*model, *m_be);
    const GenerationResult cold = fresh.generate(ab, greedy(8));
    QCOMPARE(cold.stats.prefill_tokens, 9);
    QCOMPARE(reused.text, cold.text);
    // The same prompt again recomputes just its last token.
    QCOMPARE(warm.generate(ab, greedy(2)).stats.prefill_tokens, 1);
  }

  void callback_can_cancel() {
    auto model = tiny_model();
    Generator gen(*model, *m_be);
    int calls = 0;
    const GenerationResult r = gen.generate(std::vector<int32_t>{1, 2}, greedy(50),
                                            [&](const GeneratedToken&, const std::string&) { return ++calls < 3; });
    QCOMPARE(r.finish, FinishReason::Cancelled);
    QCOMPARE(int(r.tokens.size()), 3);
  }

  void eos_and_limits() {
    auto model = tiny_model();
    Generator gen(*model, *m_be, 8);
    GenerateParams p = greedy(20);
    p.stop_at_eos = true;
    p.sampler.logit_bias = {{256, 1e9f}};  // force <|endoftext|>
    GenerationResult r = gen.generate(std::vector<int32_t>{1, 2}, p);
    QCOMPARE(r.finish, FinishReason::Eos);
    QCOMPARE(int(r.tokens.size()), 0);
    r = gen.generate(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, greedy(20));
    QCOMPARE(r.finish, FinishReason::ContextFull);
    QCOMPARE(int(r.tokens.size()), 3);  // 6 + 2 decoded fill 8 positions; the third comes from the last logits
    r = gen.generate(std::vector<int32_t>{1, 2}, greedy(0));
    QCOMPARE(int(r.tokens.size()), 0);
    QVERIFY_THROWS_EXCEPTION(engine::Error, gen.generate(std::vector<int32_t>{}, greedy(3)));
    QVERIFY_THROWS_EXCEPTION(engine::Error, gen.generate(std::vector<int32_t>(9, 1), greedy(3)));
    p.sampler.logit_bias = {{512, 1.0f}};
    QVERIFY_THROWS_EXCEPTION(engine::Error, gen.generate(std::vector<int32_t>{1}, p));
  }

  void top_logprobs_are_sorted_and_include_choice() {
    auto model = tiny_model();
    Generator gen(*model, *m_be);
    GenerateParams p = greedy(5);
    p.top_logprobs = 4;
    const GenerationResult r = gen.generate(std::vector<int32_t>{3, 4}, p);
    for (const auto& t : r.tokens) {
      QCOMPARE(int(t.top.size()), 4);
      for (int i = 1; i < 4; ++i) QVERIFY(t.top[i - 1].logprob >= t.top[i].logprob);
      QCOMPARE(t.top[0].id, t.id);  // greedy picks the most likely
      QCOMPARE(t.top[0].logprob, t.logprob);
      QVERIFY(t.logprob <= 0);
    }
  }
};

QTEST_APPLESS_MAIN(TestGenerator)
#include "test_generator.moc"
