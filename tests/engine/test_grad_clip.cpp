// Global-norm gradient clipping (engine/train/grad_clip.h): the norm against a double-precision sum,
// torch's clip_grad_norm_ rule (scale by max / (norm + 1e-6) only above the limit), and non-finite
// gradients detected, named and left unscaled.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

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

 private slots:
  void norm_matches_double_sum() {
    const Owned o = random_grads(1, 0.01);
    const engine::GradNormReport r = engine::grad_global_norm(o.tensors);
    QVERIFY(r.finite);
    QVERIFY(r.first_bad.empty());
    QVERIFY(std::abs(r.norm - reference_norm(o)) <= 1e-12 * reference_norm(o));
  }

  void clips_above_the_limit_only() {
    Owned big = random_grads(2, 1.0);
    const double n0 = reference_norm(big);
    const std::vector<std::vector<float>> before = big.grads;
    const engine::GradNormReport r = engine::clip_grad_norm(big.tensors, 1.0f);
    QVERIFY(std::abs(r.norm - n0) < 1e-9 * n0);  // the norm before clipping is reported
    const float coef = float(1.0 / (n0 + 1e-6));
    for (size_t t = 0; t < before.size(); ++t)
      for (size_t i = 0; i < before[t].size(); ++i) QCOMPARE(big.grads[t][i], before[t][i] * coef);
    QVERIFY(std::abs(reference_norm(big) - 1.0) < 1e-5);

    Owned small = random_grads(3, 1e-3);
    const std::vector<std::vector<float>> same = small.grads;
    engine::clip_grad_norm(small.tensors, 1.0f);
    QCOMPARE(small.grads, same);
    engine::clip_grad_norm(big.tensors, 0.0f);  // 0 disables clipping
  }

  void non_finite_gradients_are_named_and_untouched() {
    for (float bad : {NAN, INFINITY, -INFINITY}) {
      Owned o = random_grads(4, 1.0);
      o.grads[2][500] = bad;
      o.grads[1][3] = bad;  // the first bad tensor in list order is named
      const std::vector<std::vector<float>> before = o.grads;
      const engine::GradNormReport r = engine::clip_grad_norm(o.tensors, 1.0f);
      QVERIFY(!r.finite);
      QVERIFY(!std::isfinite(r.norm));
      QCOMPARE(QString::fromStdString(r.first_bad), QString("h.ln1.bias"));
      for (size_t t = 0; t < before.size(); ++t)
        for (size_t i = 0; i < before[t].size(); ++i)
          QVERIFY(std::memcmp(&o.grads[t][i], &before[t][i], sizeof(float)) == 0);
    }
  }

  void large_finite_gradients_stay_finite() {
    // Squares of 1e30 overflow float but not the double accumulator.
    Owned o;
    o.add(std::vector<float>(4, 1e30f));
    o.finish({"w"});
    const engine::GradNormReport r = engine::clip_grad_norm(o.tensors, 1.0f);
    QVERIFY(r.finite);
    QVERIFY(std::abs(r.norm / 2e30 - 1.0) < 1e-6);
    QVERIFY(std::abs(o.grads[0][0] - 0.5f) < 1e-6f);
  }
};

QTEST_APPLESS_MAIN(TestGradClip)
#include "test_grad_clip.moc"
