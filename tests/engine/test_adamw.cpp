// AdamW (engine/train/adamw.h) against an independent implementation and the formula itself:
//   - trajectories of torch.optim.AdamW (tests/data/train/optim_fixture.json, written by
//     tests/tools/make_optim_fixture.py): values and both moments after every step, three settings,
//     a different learning rate each step, decay on the matrix group only;
//   - a double-precision re-implementation of PyTorch's documented update over 200 steps;
//   - properties that pin single terms: decay only where the tensor asks for it, bias correction
//     (the first step moves every weight by lr), the step count, a convex problem solved;
//   - the CPU backend's threaded update gives the host rule's floats exactly.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/train/adamw.h"
#include "support/error_of.h"
#include "support/optim_fixture.h"

using nlohmann::json;

namespace {

std::vector<float> floats(const json& a) { return a.get<std::vector<float>>(); }

engine::TrainableTensor tensor(const char* name, std::vector<float>& value, std::vector<float>& grad, bool decay) {
  engine::TrainableTensor t;
  t.name = name;
  t.shape = {int64_t(value.size())};
  t.value = value.data();
  t.grad = grad.data();
  t.numel = value.size();
  t.weight_decay = decay;
  return t;
}

// PyTorch's AdamW (torch/optim/adamw.py, single-tensor path) written out in double precision.
struct RefAdamW {
  double b1, b2, eps, wd;
  std::vector<double> p, m, v;
  int t = 0;
  void step(const std::vector<double>& g, double lr, bool decay) {
    ++t;
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (size_t i = 0; i < p.size(); ++i) {
      if (decay) p[i] *= 1 - lr * wd;
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
    }
  }
};

// |a - b| within `ulps` float spacings of b (plus a tiny absolute floor for values near zero).
bool close_ulps(float a, float b, float ulps, float abs_floor = 1e-12f) {
  const float tol = ulps * std::max(std::abs(b), 1e-30f) * 1.1920929e-7f + abs_floor;
  return std::abs(a - b) <= tol;
}

}  // namespace

class TestAdamW : public QObject {
  Q_OBJECT

 private slots:
  void matches_torch_adamw_data() {
    QTest::addColumn<int>("index");
    const json fx = load_optim_fixture();
    QVERIFY2(fx.contains("adamw"), "tests/data/train/optim_fixture.json missing");
    for (size_t i = 0; i < fx["adamw"].size(); ++i)
      QTest::newRow(fx["adamw"][i]["name"].get<std::string>().c_str()) << int(i);
  }
  void matches_torch_adamw() {
    QFETCH(int, index);
    const json c = load_optim_fixture()["adamw"][size_t(index)];
    std::vector<float> w = floats(c["w0"]), b = floats(c["b0"]), gw(w.size()), gb(b.size());
    engine::AdamWParams p;
    p.beta1 = c["beta1"].get<double>();
    p.beta2 = c["beta2"].get<double>();
    p.eps = c["eps"].get<double>();
    p.weight_decay = c["weight_decay"].get<double>();
    engine::AdamW opt({tensor("w", w, gw, true), tensor("b", b, gb, false)}, p);
    int step = 0;
    for (const json& s : c["steps"]) {
      ++step;
      // Copy into the buffers the optimizer points at (assigning a new vector would move its storage).
      const std::vector<float> new_gw = floats(s["gw"]), new_gb = floats(s["gb"]);
      std::copy(new_gw.begin(), new_gw.end(), gw.begin());
      std::copy(new_gb.begin(), new_gb.end(), gb.begin());
      opt.step(s["lr"].get<float>());
      QCOMPARE(opt.step_count(), int64_t(step));
      const std::pair<const std::vector<float>*, const char*> checks[] = {{&w, "w"},
                                                                          {&b, "b"},
                                                                          {&opt.first_moment(0), "mw"},
                                                                          {&opt.second_moment(0), "vw"},
                                                                          {&opt.first_moment(1), "mb"},
                                                                          {&opt.second_moment(1), "vb"}};
      for (const auto& [ours, key] : checks) {
        const std::vector<float> want = floats(s[key]);
        QCOMPARE(ours->size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
          QVERIFY2(close_ulps((*ours)[i], want[i], 8), qPrintable(QString("step %1 %2[%3]: ours %4 torch %5")
                                                                      .arg(step)
                                                                      .arg(key)
                                                                      .arg(i)
                                                                      .arg(double((*ours)[i]), 0, 'g', 9)
                                                                      .arg(double(want[i]), 0, 'g', 9)));
      }
    }
  }

  void matches_double_reference_over_200_steps() {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> nd(0.0, 1.0);
    const size_t n = 257;
    std::vector<float> w(n), g(n);
    RefAdamW ref{0.9, 0.95, 1e-8, 0.1, std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
    for (size_t i = 0; i < n; ++i) ref.p[i] = w[i] = float(nd(rng));
    engine::AdamWParams p;
    p.weight_decay = 0.1;
    engine::AdamW opt({tensor("w", w, g, true)}, p);
    for (int step = 0; step < 200; ++step) {
      // Gradients pulling toward a target plus noise, so the moments see both drift and sign changes;
      // the reference gets exactly our float gradients, so only the update arithmetic differs.
      std::vector<double> gd(n);
      for (size_t i = 0; i < n; ++i) gd[i] = g[i] = float(0.5 * (double(w[i]) - 0.3) + 0.2 * nd(rng));
      const float lr = 1e-3f * float(1 + step % 7);
      opt.step(lr);
      ref.step(gd, lr, true);
    }
    double worst = 0;
    for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(w[i]) - ref.p[i]));
    QVERIFY2(worst < 2e-5, qPrintable(QString("max |ours - double| = %1").arg(worst)));
  }

  void decay_only_where_the_tensor_asks() {
    // Zero gradients: moments stay 0 and the Adam term is 0/(0+eps) = 0, so only decay can move a weight.
    std::vector<float> w(6, 2.0f), b(3, 2.0f), gw(6, 0.0f), gb(3, 0.0f);
    engine::AdamWParams p;
    p.weight_decay = 0.25;
    engine::AdamW opt({tensor("h.fc.weight", w, gw, true), tensor("h.fc.bias", b, gb, false)}, p);
    opt.step(0.1f);
    opt.step(0.1f);
    for (float x : w) QCOMPARE(x, 2.0f * (1.0f - 0.1f * 0.25f) * (1.0f - 0.1f * 0.25f));
    for (float x : b) QCOMPARE(x, 2.0f);
  }

  void first_step_moves_every_weight_by_lr() {
    // Bias correction: after one step m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps).
    std::vector<float> w = {1.0f, -1.0f, 0.5f, 3.0f}, g = {1e-3f, -2.0f, 40.0f, -1e-2f};
    const std::vector<float> w0 = w;
    engine::AdamW opt({tensor("w", w, g, false)}, engine::AdamWParams{});
    opt.step(0.01f);
    for (size_t i = 0; i < w.size(); ++i) {
      const double want = w0[i] - 0.01 * g[i] / (std::abs(double(g[i])) + 1e-8);
      QVERIFY2(std::abs(w[i] - want) < 1e-6, qPrintable(QString::number(i)));
    }
  }

  void solves_a_convex_problem() {
    // f(x) = 0.5 * sum a_i (x_i - c_i)^2 with very different curvatures: Adam's per-coordinate scaling
    // reaches the minimum in all of them.
    const std::vector<float> a = {100.0f, 1.0f, 0.01f}, c = {1.0f, -2.0f, 0.5f};
    std::vector<float> x = {0.0f, 0.0f, 0.0f}, g(3);
    engine::AdamW opt({tensor("x", x, g, false)}, engine::AdamWParams{0.9, 0.999, 1e-8, 0.0});
    for (int step = 0; step < 3000; ++step) {
      for (size_t i = 0; i < 3; ++i) g[i] = a[i] * (x[i] - c[i]);
      opt.step(step < 2000 ? 0.01f : 0.001f);
    }
    for (size_t i = 0; i < 3; ++i)
      QVERIFY2(std::abs(x[i] - c[i]) < 2e-3, qPrintable(QString("x%1 = %2").arg(i).arg(x[i])));
  }

  void set_step_count_resumes_bias_correction() {
    // Two optimizers: one runs 3 steps; the other gets its moments and t copied after 2, then both step.
    std::vector<float> w1 = {0.3f, -0.7f}, w2 = w1, g = {0.5f, -0.25f};
    engine::AdamW a({tensor("w", w1, g, true)}, engine::AdamWParams{0.9, 0.95, 1e-8, 0.1});
    engine::AdamW b({tensor("w", w2, g, true)}, engine::AdamWParams{0.9, 0.95, 1e-8, 0.1});
    a.step(0.01f);
    a.step(0.02f);
    std::copy(w1.begin(), w1.end(), w2.begin());
    b.first_moment(0) = a.first_moment(0);
    b.second_moment(0) = a.second_moment(0);
    b.set_step_count(a.step_count());
    a.step(0.03f);
    b.step(0.03f);
    QCOMPARE(w2, w1);
    QCOMPARE(b.step_count(), int64_t(3));
  }

  void cpu_backend_update_equals_host_rule() {
    // Two tensors (one decayed) long enough to span many of the backend's blocks, with ragged ends.
    std::mt19937_64 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    auto randoms = [&](size_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = nd(rng);
      return v;
    };
    // New gradients in place: the optimizers hold pointers into these buffers.
    auto refill = [&](std::vector<float>& v) {
      for (float& x : v) x = nd(rng);
    };
    std::vector<float> w = randoms(3 * 65536 + 37), b = randoms(1001);
    std::vector<float> w_host = w, b_host = b, gw(w.size()), gb(b.size());
    const engine::AdamWParams p{0.9, 0.95, 1e-8, 0.1};
    auto be = engine::make_cpu_backend(3);
    engine::AdamW on_backend({tensor("w", w, gw, true), tensor("b", b, gb, false)}, p, be.get());
    engine::AdamW on_host({tensor("w", w_host, gw, true), tensor("b", b_host, gb, false)}, p);
    for (int step = 0; step < 4; ++step) {
      refill(gw);
      refill(gb);
      on_backend.step(1e-3f * float(step + 1));
      on_host.step(1e-3f * float(step + 1));
    }
    QVERIFY(w == w_host);
    QVERIFY(b == b_host);
    for (size_t i = 0; i < 2; ++i) {
      QVERIFY(on_backend.first_moment(i) == on_host.first_moment(i));
      QVERIFY(on_backend.second_moment(i) == on_host.second_moment(i));
    }
  }

  void rejects_bad_hyperparameters() {
    std::vector<float> w(1), g(1);
    auto make = [&](engine::AdamWParams p) { engine::AdamW opt({tensor("w", w, g, true)}, p); };
    QVERIFY(error_of([&] { make({1.0, 0.95, 1e-8, 0.0}); }).contains("beta1"));
    QVERIFY(error_of([&] { make({0.9, -0.1, 1e-8, 0.0}); }).contains("beta2"));
    QVERIFY(error_of([&] { make({0.9, 0.95, 0.0, 0.0}); }).contains("eps"));
    QVERIFY(error_of([&] { make({0.9, 0.95, 1e-8, -1.0}); }).contains("weight decay"));
    QVERIFY(error_of([&] { make({0.9, 0.95, 1e-8, NAN}); }).contains("weight decay"));
    QVERIFY(error_of([&] { make({0.9, 0.95, 1e-8, 0.1}); }).isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestAdamW)
#include "test_adamw.moc"
