// engine/inspect: attention capture, the logit lens and per-position next-token probabilities.
//
// References: tests/data/inspect/<model>.safetensors, written by Hugging Face transformers in float64
// (tests/tools/make_inspect_fixture.py) for the tiny GPT-2, Llama (4 query heads over 2 key/value
// heads) and Qwen2 fixtures; the model's own full forward (a separate Runner without captures) for
// the last lens row and token log-probabilities; a model with the key/value heads repeated (plain
// multi-head) for the grouped-query mapping; plain sorting for top-k.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "engine/error.h"
#include "engine/inspect/inspect.h"
#include "engine/inspect/top_k.h"
#include "engine/io/safetensors.h"
#include "engine/kv_cache.h"
#include "engine/model_loader.h"
#include "support/error_of.h"
#include "support/model_helpers.h"

using namespace engine;

namespace {

const std::string kData = std::string(WB_TEST_DATA_DIR);

struct Fixture {
  std::unique_ptr<io::SafetensorsFile> file;
  std::vector<int32_t> ids;
  std::vector<float> attention;  // (L, NH, T, T)
  std::vector<float> lens;       // (L+1, T, V) log-probabilities
};

Fixture load_fixture(const QString& name) {
  Fixture f;
  f.file = io::SafetensorsFile::open(kData + "/inspect/" + name.toStdString() + ".safetensors");
  const io::StTensor* ids = f.file->find("input_ids");
  f.ids.resize(ids->numel());
  std::memcpy(f.ids.data(), ids->data, ids->nbytes);
  f.attention = f.file->read_f32(*f.file->find("attention"));
  f.lens = f.file->read_f32(*f.file->find("lens"));
  return f;
}

// Log-softmax in double, the reference for probabilities.
std::vector<double> log_softmax_ref(std::span<const float> logits) {
  double m = -INFINITY;
  for (float l : logits) m = std::max(m, double(l));
  double s = 0;
  for (float l : logits) s += std::exp(double(l) - m);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - m - std::log(s);
  return out;
}

}  // namespace

class TestInspect : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void models_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("tiny-gpt2") << "tiny-gpt2";
    QTest::newRow("tiny-llama") << "tiny-llama";
    QTest::newRow("tiny-qwen2") << "tiny-qwen2";
  }

  void attention_rows_are_causal_distributions_data() { models_data(); }
  void attention_rows_are_causal_distributions() {
    QFETCH(QString, name);
    auto model = load_model(kData + "/" + name.toStdString());
    const std::vector<int32_t> ids = {3, 17, 256, 4, 4, 99, 500, 1, 42, 7, 300, 11, 64};
    const Inspection in = inspect_prompt(*model, *m_be, ids);
    const int L = model->config().n_layer, NH = model->config().n_head, T = int(ids.size());
    QCOMPARE(in.n_head, NH);  // query heads, also for grouped-query models
    QCOMPARE(in.attention.size(), size_t(L) * NH * T * T);
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < NH; ++h)
        for (int q = 0; q < T; ++q) {
          double sum = 0;
          for (int k = 0; k < T; ++k) {
            const float p = in.att(l, h, q, k);
            if (k > q)
              QVERIFY2(p == 0.0f, qPrintable(QString("l%1 h%2 q%3 k%4: %5").arg(l).arg(h).arg(q).arg(k).arg(p)));
            QVERIFY(p >= 0.0f && p <= 1.0f);
            sum += p;
          }
          QVERIFY2(std::abs(sum - 1.0) < 1e-5,
                   qPrintable(QString("l%1 h%2 q%3: sum %4").arg(l).arg(h).arg(q).arg(sum)));
        }
    // The first query can only attend to itself.
    QCOMPARE(in.att(0, 0, 0, 0), 1.0f);
  }

  void attention_matches_transformers_data() { models_data(); }
  void attention_matches_transformers() {
    QFETCH(QString, name);
    auto model = load_model(kData + "/" + name.toStdString());
    const Fixture f = load_fixture(name);
    const Inspection in = inspect_prompt(*model, *m_be, f.ids);
    QCOMPARE(in.attention.size(), f.attention.size());
    const double d = max_abs_diff(in.attention, f.attention);
    qInfo("%s: max |attention diff| vs transformers %.3g", qPrintable(name), d);
    QVERIFY2(d < 2e-5, qPrintable(QString::number(d)));
  }

  void lens_matches_transformers_data() { models_data(); }
  void lens_matches_transformers() {
    QFETCH(QString, name);
    auto model = load_model(kData + "/" + name.toStdString());
    const Fixture f = load_fixture(name);
    InspectOptions o;
    o.top_k = 5;
    const Inspection in = inspect_prompt(*model, *m_be, f.ids, o);
    const int L = model->config().n_layer, V = model->config().vocab_size, T = int(f.ids.size()), K = 5;
    QCOMPARE(in.lens_rows, L + 1);
    QCOMPARE(f.lens.size(), size_t(L + 1) * T * V);
    double worst = 0;
    for (int row = 0; row <= L; ++row)
      for (int t = 0; t < T; ++t) {
        const float* ref = f.lens.data() + (size_t(row) * T + t) * V;
        std::vector<float> sorted(ref, ref + V);
        std::sort(sorted.begin(), sorted.end(), std::greater<>());
        for (int j = 0; j < K; ++j) {
          // Our j-th token has the reference probability we report, and it is the reference's j-th
          // largest (so ties cannot make the check flaky: the values are compared, not the ids).
          const double p_ref = std::exp(double(ref[in.lens_id(row, t, j)]));
          worst = std::max(worst, std::abs(p_ref - in.lens_prob(row, t, j)));
          worst = std::max(worst, std::abs(std::exp(double(sorted[j])) - in.lens_prob(row, t, j)));
        }
      }
    qInfo("%s: max |lens prob diff| vs transformers %.3g", qPrintable(name), worst);
    QVERIFY2(worst < 2e-5, qPrintable(QString::number(worst)));
  }

  void lens_last_row_is_the_models_output_data() { models_data(); }
  void lens_last_row_is_the_models_output() {
    QFETCH(QString, name);
    auto model = load_model(kData + "/" + name.toStdString());
    const std::vector<int32_t> ids = {1, 2, 3, 400, 5, 6, 7, 8, 9, 10, 11};
    const int L = model->config().n_layer, V = model->config().vocab_size, T = int(ids.size()), K = 4;
    const std::vector<float> logits = full_logits(*model, *m_be, ids);  // captures off
    InspectOptions o;
    o.top_k = K;
    const Inspection in = inspect_prompt(*model, *m_be, ids, o);
    for (int t = 0; t < T; ++t) {
      const std::span<const float> row(logits.data() + size_t(t) * V, size_t(V));
      const std::vector<double> lp = log_softmax_ref(row);
      std::vector<int32_t> order(V);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
      for (int j = 0; j < K; ++j) {
        QCOMPARE(in.next_id(t, j), order[j]);
        QCOMPARE(in.lens_id(L, t, j), order[j]);
        QVERIFY(std::abs(in.next_prob(t, j) - std::exp(lp[order[j]])) < 1e-6);
      }
      if (t > 0) QVERIFY(std::abs(in.token_logprob[t] - lp_at(logits, V, t - 1, ids[t])) < 1e-5);
    }
    QCOMPARE(in.token_logprob[0], 0.0f);

    // The captured stream's last row through the head is the forward's output bit for bit, and the
    // captures do not change what the forward computes.
    Runner r(*model, *m_be);
    KVCache cache(model->config(), T);
    ForwardOptions fo;
    fo.all_logits = true;
    fo.capture_residual = true;
    fo.capture_attention = true;
    const auto s = r.forward(ids, cache, fo);
    const std::vector<float> captured(s.begin(), s.end());
    QVERIFY(captured == logits);
    QCOMPARE(r.residual_stream().size(), size_t(L + 1) * T * model->config().n_embd);
    std::vector<float> again(size_t(T) * V);
    r.head_forward(again.data(), r.residual_stream().data() + size_t(L) * T * model->config().n_embd, T);
    QVERIFY(again == logits);
    // Row 0 is the embedding: for GPT-2, wte[id] + wpe[pos].
    if (name == "tiny-gpt2") {
      const int C = model->config().n_embd;
      const float* wte = model->param_data("wte");
      const float* wpe = model->param_data("wpe");
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < C; ++i)
          QCOMPARE(r.residual_stream()[size_t(t) * C + i], wte[size_t(ids[t]) * C + i] + wpe[size_t(t) * C + i]);
    }
  }

  void grouped_query_heads_map_to_their_kv_head() {
    // Repeating each key/value head for its group of query heads gives a plain multi-head model with
    // the same function; its per-head attention must equal what the GQA model reports per query head.
    auto gqa = load_model(kData + "/tiny-llama");
    ModelConfig c = gqa->config();
    const int group = c.n_head / c.n_kv_head, HS = c.head_size(), C = c.n_embd, L = c.n_layer;
    QVERIFY(group > 1);
    c.n_kv_head = c.n_head;
    Model mha(c);
    for (const auto& p : mha.params()) {
      float* dst = mha.param_data(p.name);
      const float* src = gqa->param_data(p.name);
      if (p.name != "h.wk.weight" && p.name != "h.wv.weight") {
        std::copy(src, src + p.numel, dst);
        continue;
      }
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < c.n_head; ++h)
          std::copy(src + (size_t(l) * gqa->config().kv_width() + size_t(h / group) * HS) * C,
                    src + (size_t(l) * gqa->config().kv_width() + size_t(h / group + 1) * HS) * C,
                    dst + (size_t(l) * C + size_t(h) * HS) * C);
    }
    const std::vector<int32_t> ids = {9, 8, 7, 6, 5, 4, 3, 2, 1};
    InspectOptions o;
    o.lens = false;
    const Inspection a = inspect_prompt(*gqa, *m_be, ids, o), b = inspect_prompt(mha, *m_be, ids, o);
    QCOMPARE(a.attention.size(), b.attention.size());
    QVERIFY(max_abs_diff(a.attention, b.attention) < 1e-6);
    // ... and the heads of one group do differ (each has its own queries).
    QVERIFY(max_abs_diff(a.head_matrix(0, 0), a.head_matrix(0, 1)) > 1e-3);
  }

  void options_select_what_is_computed() {
    auto model = load_model(kData + "/tiny-gpt2");
    const std::vector<int32_t> ids = {10, 20, 30, 40, 50};
    const Inspection full = inspect_prompt(*model, *m_be, ids);
    QCOMPARE(full.top_k, 5);
    InspectOptions o;
    o.attention = false;
    o.lens = false;
    o.top_k = 3;
    const Inspection small = inspect_prompt(*model, *m_be, ids, o);
    QVERIFY(small.attention.empty());
    QCOMPARE(small.lens_rows, 1);
    QCOMPARE(small.lens_ids.size(), size_t(5 * 3));
    for (int t = 0; t < 5; ++t)
      for (int j = 0; j < 3; ++j) {
        QCOMPARE(small.next_id(t, j), full.next_id(t, j));
        QCOMPARE(small.next_prob(t, j), full.next_prob(t, j));
      }
    o.top_k = 100000;  // clamped to the vocabulary
    QCOMPARE(inspect_prompt(*model, *m_be, std::span(ids).first(1), o).top_k, model->config().vocab_size);
    // Every id shown has its text.
    for (int32_t id : full.lens_ids)
      QCOMPARE(full.piece(id), model->tokenizer() ? model->tokenizer()->token_bytes(id) : std::string());
  }

  void progress_can_cancel() {
    auto model = load_model(kData + "/tiny-llama");
    InspectOptions o;
    int calls = 0;
    o.progress = [&](float) { return ++calls < 1; };
    const std::vector<int32_t> ids = {1, 2, 3};
    bool cancelled = false;
    try {
      inspect_prompt(*model, *m_be, ids, o);
    } catch (const Cancelled&) {
      cancelled = true;
    }
    QVERIFY(cancelled);
    QCOMPARE(calls, 1);
  }

  void bad_input_is_a_clear_error() {
    auto model = load_model(kData + "/tiny-gpt2");
    QVERIFY(error_of([&] { inspect_prompt(*model, *m_be, std::vector<int32_t>{}); }).contains("no tokens"));
    std::vector<int32_t> long_ids(size_t(model->config().max_seq_len) + 1, 1);
    QVERIFY(error_of([&] { inspect_prompt(*model, *m_be, long_ids); }).contains("exceed the model's context"));
    QVERIFY(error_of([&] {
              inspect_prompt(*model, *m_be, std::vector<int32_t>{1, 512});
            }).contains("outside the vocabulary"));
    QVERIFY(
        error_of([&] { inspect_prompt(*model, *m_be, std::vector<int32_t>{-1}); }).contains("outside the vocabulary"));
  }

  void reduce_heads_mean_and_max() {
    auto model = load_model(kData + "/tiny-qwen2");
    const std::vector<int32_t> ids = {5, 6, 7, 8, 9, 10};
    const Inspection in = inspect_prompt(*model, *m_be, ids);
    const int T = in.T;
    for (int l = 0; l < in.n_layer; ++l) {
      const auto mean = reduce_heads(in, l, HeadReduce::Mean), mx = reduce_heads(in, l, HeadReduce::Max);
      for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k) {
          double s = 0, m = 0;
          for (int h = 0; h < in.n_head; ++h) {
            s += in.att(l, h, q, k);
            m = std::max(m, double(in.att(l, h, q, k)));
          }
          QVERIFY(std::abs(mean[size_t(q) * T + k] - s / in.n_head) < 1e-6);
          QCOMPARE(double(mx[size_t(q) * T + k]), m);
        }
    }
    QVERIFY(error_of([&] { reduce_heads(in, in.n_layer, HeadReduce::Mean); }).contains("out of range"));
  }

  void reduce_heads_over_a_hand_picked_set() {
    auto model = load_model(kData + "/tiny-llama");
    const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2};
    const Inspection in = inspect_prompt(*model, *m_be, ids);
    QVERIFY(in.n_layer >= 2 && in.n_head >= 2);
    const int T = in.T;
    // Heads from two layers; the same head twice counts twice in the mean (callers pass a set).
    const std::vector<HeadRef> picked = {{0, 1}, {in.n_layer - 1, 0}, {in.n_layer - 1, in.n_head - 1}};
    const auto mean = reduce_heads(in, picked, HeadReduce::Mean), mx = reduce_heads(in, picked, HeadReduce::Max);
    QCOMPARE(mean.size(), size_t(T) * T);
    for (int q = 0; q < T; ++q) {
      double rowSum = 0;
      for (int k = 0; k < T; ++k) {
        double s = 0, m = 0;
        for (const HeadRef& r : picked) {
          s += in.att(r.layer, r.head, q, k);
          m = std::max(m, double(in.att(r.layer, r.head, q, k)));
        }
        QVERIFY(std::abs(mean[size_t(q) * T + k] - s / picked.size()) < 1e-6);
        QCOMPARE(double(mx[size_t(q) * T + k]), m);
        rowSum += mean[size_t(q) * T + k];
      }
      QVERIFY(std::abs(rowSum - 1.0) < 1e-5);  // a mean of distributions is one
    }
    // One head is that head; a whole layer as a set equals the layer reduction.
    const std::vector<HeadRef> one = {{1, 0}};
    const auto single = reduce_heads(in, one, HeadReduce::Mean);
    const auto head = in.head_matrix(1, 0);
    QVERIFY(std::equal(single.begin(), single.end(), head.begin()));
    std::vector<HeadRef> layer1;
    for (int h = 0; h < in.n_head; ++h) layer1.push_back({1, h});
    QCOMPARE(reduce_heads(in, layer1, HeadReduce::Max), reduce_heads(in, 1, HeadReduce::Max));
    QVERIFY(error_of([&] { reduce_heads(in, std::vector<HeadRef>{}, HeadReduce::Mean); }).contains("no heads"));
    QVERIFY(error_of([&] {
              reduce_heads(in, std::vector<HeadRef>{{0, in.n_head}}, HeadReduce::Max);
            }).contains("out of range"));
  }

  void top_k_matches_a_full_sort() {
    std::vector<float> v = {0.5f, 2.0f, NAN, 2.0f, -INFINITY, 7.0f, -1.0f, 0.5f};
    QCOMPARE(top_k_indices(v, 4), (std::vector<int32_t>{5, 1, 3, 0}));  // ties: smaller id first
    QCOMPARE(top_k_indices(v, 0), std::vector<int32_t>{});
    QCOMPARE(top_k_indices(v, 100).size(), v.size());
    // NaN counts as -inf: the two tie at the bottom, smaller id first.
    QCOMPARE(top_k_indices(v, 100)[6], 2);
    QCOMPARE(top_k_indices(v, 100).back(), 4);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d(-20, 20);  // many ties
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> x(300);
      for (float& e : x) e = float(d(rng)) * 0.25f;
      std::vector<int32_t> order(x.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return x[a] > x[b]; });
      const int k = 1 + trial * 5;
      QCOMPARE(top_k_indices(x, k), std::vector<int32_t>(order.begin(), order.begin() + k));
    }
    QCOMPARE(log_sum_exp(std::vector<float>{0.0f, 0.0f}), std::log(2.0));
    QCOMPARE(log_sum_exp(std::vector<float>{1000.0f, 1000.0f}), 1000.0 + std::log(2.0));
    QCOMPARE(log_sum_exp(std::vector<float>{-INFINITY}), -INFINITY);
  }

 private:
  static double lp_at(const std::vector<float>& logits, int V, int t, int32_t id) {
    return log_softmax_ref(std::span<const float>(logits.data() + size_t(t) * V, size_t(V)))[size_t(id)];
  }
};

QTEST_APPLESS_MAIN(TestInspect)
#include "test_inspect.moc"
