// Speculative decoding (engine/serve/speculative.h): at temperature 0 the output equals the plain Generator's with
// a draft model (the model itself as its own draft accepts every draft) and with prompt lookup; when sampling, the
// tokens follow the target's distribution (the acceptance rule, checked statistically against plain sampling, and
// failing against the draft's distribution); SamplerChain::distribution against the chain's own draws; refusals.
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <random>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/model_loader.h"
#include "engine/serve/speculative.h"
#include "support/tiny_text_model.h"

using namespace engine;

namespace {

GenerateParams greedy(int n) {
  GenerateParams p;
  p.max_tokens = n;
  p.sampler.temperature = 0;
  p.stop_at_eos = false;
  p.top_logprobs = 2;
  return p;
}

std::vector<int32_t> ids_of(const GenerationResult& r) {
  std::vector<int32_t> v;
  for (const auto& t : r.tokens) v.push_back(t.id);
  return v;
}

// Tokens up to the first near-tie of the reference (rounding may break a tie either way; see test_batch_scheduler).
bool same_up_to_ties(const GenerationResult& got, const GenerationResult& want) {
  for (size_t i = 0; i < want.tokens.size(); ++i) {
    const auto& w = want.tokens[i];
    if (w.top.size() == 2 && w.top[0].logprob - w.top[1].logprob < 1e-3f) return true;
    if (i >= got.tokens.size() || got.tokens[i].id != w.id) return false;
  }
  return got.tokens.size() == want.tokens.size() && got.text == want.text;
}

// Total variation distance between two empirical distributions.
double total_variation(const std::map<std::vector<int32_t>, int>& a, const std::map<std::vector<int32_t>, int>& b, int n) {
  std::map<std::vector<int32_t>, double> diff;
  for (const auto& [k, c] : a) diff[k] += double(c) / n;
  for (const auto& [k, c] : b) diff[k] -= double(c) / n;
  double tv = 0;
  for (const auto& [k, d] : diff) tv += std::abs(d);
  return tv / 2;
}

}  // namespace

class TestSpeculative : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  std::unique_ptr<Model> m_target, m_draft, m_near;  // m_near: the target with its weights perturbed
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    writeTinyTextModel(m_dir.path() + QStringLiteral("/t"), 21, 128);
    writeTinyTextModel(m_dir.path() + QStringLiteral("/d"), 22, 128);
    m_target = load_model((m_dir.path() + QStringLiteral("/t")).toStdString());
    m_draft = load_model((m_dir.path() + QStringLiteral("/d")).toStdString());
    m_near = load_model((m_dir.path() + QStringLiteral("/t")).toStdString());
    std::mt19937 rng(5);
    std::normal_distribution<float> noise(0.f, 0.05f);
    for (float& w : m_near->all_params()) w *= 1.f + noise(rng);
  }

  void distribution_is_what_the_chain_draws_from() {
    std::vector<float> logits(512);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = float(std::sin(double(i) * 1.7) * 3.0);
    SamplerParams sp;
    sp.temperature = 0.7f;
    sp.top_k = 6;
    sp.top_p = 0.9f;
    sp.min_p = 0;
    sp.seed = 3;
    SamplerChain chain = SamplerChain::from_params(sp);
    const auto d = chain.distribution(logits);
    double sum = 0;
    for (const auto& [id, p] : d) sum += p;
    QVERIFY(std::abs(sum - 1.0) < 1e-9);
    QVERIFY(d.size() <= 6);
    std::map<int32_t, int> counts;
    const int N = 20000;
    for (int i = 0; i < N; ++i) ++counts[chain.sample(logits)];
    for (const auto& [id, p] : d) QVERIFY2(std::abs(counts[id] / double(N) - p) < 0.015, qPrintable(QString::number(id)));
    for (const auto& [id, c] : counts) QVERIFY2(std::any_of(d.begin(), d.end(), [&](auto& e) { return e.first == id; }), "drawn outside");
    sp.temperature = 0;
    const auto g = SamplerChain::from_params(sp).distribution(logits);
    QCOMPARE(int(g.size()), 1);
    QCOMPARE(g[0].first, int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin()));
  }

  void greedy_equals_the_plain_generator() {
    Generator plain(*m_target, *m_be);
    const std::vector<std::vector<int32_t>> prompts = {{5, 9, 200}, {1}, {300, 301, 302, 303, 304, 305}};
    for (const auto& prompt : prompts) {
      const GenerationResult want = plain.generate(prompt, greedy(40));
      SpeculativeOptions o;
      o.draft_tokens = 4;
      SpeculativeStats st;
      const GenerationResult got = SpeculativeGenerator(*m_target, m_draft.get(), *m_be, o).generate(prompt, greedy(40), {}, &st);
      QVERIFY(same_up_to_ties(got, want));
      QVERIFY(st.steps < 40 || st.accepted == 0);
      // The model as its own draft: every draft is accepted, k+1 tokens per step.
      SpeculativeStats self;
      const GenerationResult mirror =
          SpeculativeGenerator(*m_target, m_target.get(), *m_be, o).generate(prompt, greedy(40), {}, &self);
      QVERIFY(same_up_to_ties(mirror, want));
      QVERIFY2(self.acceptance_rate() > 0.95, qPrintable(QString::number(self.acceptance_rate())));
      QVERIFY(self.steps <= 40 / 5 + 2);
      // Prompt lookup.
      SpeculativeOptions lookup;
      lookup.lookup_ngram = 2;
      const GenerationResult looked = SpeculativeGenerator(*m_target, nullptr, *m_be, lookup).generate(prompt, greedy(40));
      QVERIFY(same_up_to_ties(looked, want));
    }
  }

  void stop_strings_and_streaming_work_as_in_the_generator() {
    Generator plain(*m_target, *m_be);
    const std::vector<int32_t> prompt = {7, 8, 9};
    const std::string free_text = plain.generate(prompt, greedy(30)).text;
    QVERIFY(free_text.size() > 6);
    GenerateParams p = greedy(30);
    p.stop = {free_text.substr(free_text.size() / 2, 2)};
    const GenerationResult want = plain.generate(prompt, p);
    std::string streamed;
    SpeculativeOptions o;
    const GenerationResult got = SpeculativeGenerator(*m_target, m_target.get(), *m_be, o)
                                     .generate(prompt, p, [&](const GeneratedToken&, const std::string& t) {
                                       streamed += t;
                                       return true;
                                     });
    QCOMPARE(got.finish, FinishReason::Stop);
    QCOMPARE(got.text, want.text);
    QCOMPARE(streamed, want.text);
  }

  void sampling_follows_the_targets_distribution() {
    GenerateParams p;
    p.max_tokens = 2;
    p.stop_at_eos = false;
    p.sampler.temperature = 1.0f;
    p.sampler.top_k = 4;
    p.sampler.top_p = 1.0f;
    p.sampler.min_p = 0;
    const std::vector<int32_t> prompt = {40, 41, 42};
    const int N = 3000;
    std::map<std::vector<int32_t>, int> plain, spec, spec_far, draft_only;
    Generator gen(*m_target, *m_be), dgen(*m_draft, *m_be);
    SpeculativeOptions o;
    o.draft_tokens = 3;
    SpeculativeGenerator sg(*m_target, m_near.get(), *m_be, o), far(*m_target, m_draft.get(), *m_be, o);
    SpeculativeStats total;
    for (int i = 0; i < N; ++i) {
      p.sampler.seed = uint64_t(1000 + i);
      ++plain[ids_of(gen.generate(prompt, p))];
      ++draft_only[ids_of(dgen.generate(prompt, p))];
      SpeculativeStats st;
      ++spec[ids_of(sg.generate(prompt, p, {}, &st))];
      total.drafted += st.drafted;
      total.accepted += st.accepted;
      ++spec_far[ids_of(far.generate(prompt, p))];  // drafts almost never accepted: the residual draws
    }
    // Two tokens over top-4 choices each: at most 16 outcomes; 3000 samples put chance differences near 0.03.
    const double tv = total_variation(plain, spec, N);
    QVERIFY2(tv < 0.07, qPrintable(QStringLiteral("TV %1").arg(tv)));
    QVERIFY2(total_variation(plain, spec_far, N) < 0.07, qPrintable(QString::number(total_variation(plain, spec_far, N))));
    // The test can tell distributions apart: the draft's own differs clearly from the target's.
    QVERIFY2(total_variation(plain, draft_only, N) > 0.2, qPrintable(QString::number(total_variation(plain, draft_only, N))));
    QVERIFY(total.drafted > 0);
    qInfo("accepted %lld of %lld", (long long)total.accepted, (long long)total.drafted);
    QVERIFY2(total.accepted > 0 && total.accepted < total.drafted, qPrintable(QStringLiteral("%1 of %2").arg(total.accepted).arg(total.drafted)));  // some drafts accepted, some not
  }

  void refusals() {
    SpeculativeOptions none;
    QVERIFY_THROWS_EXCEPTION(Error, SpeculativeGenerator(*m_target, nullptr, *m_be, none));
    SpeculativeOptions bad;
    bad.draft_tokens = 0;
    QVERIFY_THROWS_EXCEPTION(Error, SpeculativeGenerator(*m_target, m_draft.get(), *m_be, bad));
    SpeculativeOptions o;
    SpeculativeGenerator sg(*m_target, m_near.get(), *m_be, o), far(*m_target, m_draft.get(), *m_be, o);
    QVERIFY_THROWS_EXCEPTION(Error, sg.generate(std::vector<int32_t>{}, greedy(3)));
    QVERIFY_THROWS_EXCEPTION(Error, sg.generate(std::vector<int32_t>(129, 1), greedy(3)));
  }
};

QTEST_GUILESS_MAIN(TestSpeculative)
#include "test_speculative.moc"
