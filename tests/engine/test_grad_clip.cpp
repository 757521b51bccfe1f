// Global-norm gradient clipping (engine/train/grad_clip.h): the norm against a double-precision sum,
// torch's clip_grad_norm_ rule (scale by max / (norm + 1e-6) only above the limit), and non-finite
// gradients detected, named and left unscaled -- each on the host and on the CPU backend (threads split the
// buffers), whose norm does not depend on its thread count.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/backend.h"
#include "engine/train/grad_clip.h"

namespace {

struct Owned {
  std::vector<std::vector<float>> values, grads;
  std::vector<engine::TrainableTensor> tensors;
  void add(std::vector<float> g) {
    values.emplace_back(g.size(), 0.0f);
    grads.push_back(std::move(g));
  }
  void finish(const std::vector<const char*>& names) {
    for (size_t i = 0; i < grads.size(); ++i) {
      engine::TrainableTensor t;
      t.name = names[i];
      t.value = values[i].data();
      t.grad = grads[i].data();
      t.numel = grads[i].size();
      tensors.push_back(t);
    }
  }
};

Owned random_grads(uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, scale);
  Owned o;
  for (size_t n : {300u, 7u, 1000u}) {
    std::vector<float> g(n);
    for (float& x : g) x = float(nd(rng));
    o.add(g);
  }
  o.finish({"h.qkv.weight", "h.ln1.bias", "wte"});
  return o;
}

double reference_norm(const Owned& o) {
  double s = 0;
  for (const auto& g : o.grads)
    for (float x : g) s += double(x) * double(x);
  return std::sqrt(s);
}

}  // namespace

class TestGradClip : public QObject {
  Q_OBJECT
  std::unique_ptr<engine::Backend> m_two_threads = engine::make_cpu_backend(2);

  // Each case runs once on the host (no backend) and once on the CPU backend.
  void where_data() {
    QTest::addColumn<bool>("on_backend");
    QTest::newRow("host") << false;
    QTest::newRow("cpu backend") << true;
  }
  engine::Backend* where() {
    QFETCH(bool, on_backend);
    return on_backend ? m_two_threads.get() : nullptr;
  }

 private slots:
  void norm_matches_double_sum_data() { where_data(); }
  void norm_matches_double_sum() {
    const Owned o = random_grads(1, 0.01);
    const engine::GradNormReport r = engine::grad_global_norm(o.tensors, where());
    QVERIFY(r.finite);
    QVERIFY(r.first_bad.empty());
    QVERIFY(std::abs(r.norm - reference_norm(o)) <= 1e-12 * reference_norm(o));
  }

  void clips_above_the_limit_only_data() { where_data(); }
  void clips_above_the_limit_only() {
    engine::Backend* be = where();
    Owned big = random_grads(2, 1.0);
    const double n0 = reference_norm(big);
    const std::vector<std::vector<float>> before = big.grads;
    const engine::GradNormReport r = engine::clip_grad_norm(big.tensors, 1.0f, be);
    QVERIFY(std::abs(r.norm - n0) < 1e-9 * n0);  // the norm before clipping is reported
    const float coef = float(1.0 / (n0 + 1e-6));
    for (size_t t = 0; t < before.size(); ++t)
      for (size_t i = 0; i < before[t].size(); ++i) QCOMPARE(big.grads[t][i], before[t][i] * coef);
    QVERIFY(std::abs(reference_norm(big) - 1.0) < 1e-5);

    Owned small = random_grads(3, 1e-3);
    const std::vector<std::vector<float>> same = small.grads;
    engine::clip_grad_norm(small.tensors, 1.0f, be);
    QCOMPARE(small.grads, same);
    engine::clip_grad_norm(big.tensors, 0.0f, be);  // 0 disables clipping
  }

  void non_finite_gradients_are_named_and_untouched_data() { where_data(); }
  void non_finite_gradients_are_named_and_untouched() {
    engine::Backend* be = where();
    for (float bad : {NAN, INFINITY, -INFINITY}) {
      Owned o = random_grads(4, 1.0);
      o.grads[2][500] = bad;
      o.grads[1][3] = bad;  // the first bad tensor in list order is named
      const std::vector<std::vector<float>> before = o.grads;
      const engine::GradNormReport r = engine::clip_grad_norm(o.tensors, 1.0f, be);
      QVERIFY(!r.finite);
      QVERIFY(!std::isfinite(r.norm));
      QCOMPARE(QString::fromStdString(r.first_bad), QString("h.ln1.bias"));
      for (size_t t = 0; t < before.size(); ++t)
        for (size_t i = 0; i < before[t].size(); ++i)
          QVERIFY(std::memcmp(&o.grads[t][i], &before[t][i], sizeof(float)) == 0);
    }
  }

  void large_finite_gradients_stay_finite_data() { where_data(); }
  void large_finite_gradients_stay_finite() {
    // Squares of 1e30 overflow float but not the double accumulator.
    Owned o;
    o.add(std::vector<float>(4, 1e30f));
    o.finish({"w"});
    const engine::GradNormReport r = engine::clip_grad_norm(o.tensors, 1.0f, where());
    QVERIFY(r.finite);
    QVERIFY(std::abs(r.norm / 2e30 - 1.0) < 1e-6);
    QVERIFY(std::abs(o.grads[0][0] - 0.5f) < 1e-6f);
  }

  void backend_norm_does_not_depend_on_thread_count() {
    // Large enough for many of the backend's blocks, with a ragged end.
    Owned o;
    std::mt19937_64 rng(9);
    std::normal_distribution<double> nd(0.0, 1.0);
    std::vector<float> g(5 * 65536 + 123);
    for (float& x : g) x = float(nd(rng));
    o.add(g);
    o.finish({"h.fc.weight"});
    const double host = engine::grad_global_norm(o.tensors).norm;
    std::vector<double> norms;
    for (int threads : {1, 2, 3}) {
      auto be = engine::make_cpu_backend(threads);
      norms.push_back(engine::grad_global_norm(o.tensors, be.get()).norm);
    }
    QCOMPARE(norms[1], norms[0]);
    QCOMPARE(norms[2], norms[0]);
    QVERIFY(std::abs(norms[0] - host) <= 1e-12 * host);
    QVERIFY(std::abs(host - reference_norm(o)) <= 1e-12 * host);
  }
};

QTEST_APPLESS_MAIN(TestGradClip)
#include "test_grad_clip.moc"
