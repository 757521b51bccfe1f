// Every training op of the CPU backend against double precision:
//   - each backward against central finite differences of a double-precision reference of its forward
//     (the objective is J = sum(dout * out) for a random dout, so dJ/dinput is exactly what the backward
//     computes), over small shapes and several seeds;
//   - each training forward (attention over a batch, softmax + cross-entropy, dropout) against a double
//     reference.
// Gradient buffers start from random values, not zero, so the tests also check that backward ops ADD
// into them (backend.h's convention) instead of overwriting.
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "cpu/dropout_mask.h"
#include "engine/backend.h"
#include "support/op_reference.h"

using engine::Backend;
using Vec = std::vector<double>;

namespace {

Vec to_d(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

// Central differences of J(inputs) = sum(g * f(inputs)) with respect to inputs[which], in double.
Vec finite_diff(const std::function<Vec(const std::vector<Vec>&)>& f, std::vector<Vec> inputs, size_t which,
                const Vec& g, double h = 1e-5) {
  Vec grad(inputs[which].size());
  auto J = [&]() {
    const Vec out = f(inputs);
    double s = 0;
    for (size_t i = 0; i < out.size(); ++i) s += g[i] * out[i];
    return s;
  };
  for (size_t i = 0; i < grad.size(); ++i) {
    const double x = inputs[which][i];
    inputs[which][i] = x + h;
    const double jp = J();
    inputs[which][i] = x - h;
    const double jm = J();
    inputs[which][i] = x;
    grad[i] = (jp - jm) / (2 * h);
  }
  return grad;
}

// max |got - base - want| / max(1, max |want|): `got` is a gradient buffer that started at `base`.
double grad_err(const std::vector<float>& got, const std::vector<float>& base, const Vec& want) {
  double worst = 0, scale = 1;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(double(got[i]) - double(base[i]) - want[i]));
  return worst / scale;
}

#define CHECK_GRAD(name, got, base, want, tol)                                            \
  do {                                                                                    \
    const double e_ = grad_err(got, base, want);                                          \
    QVERIFY2(e_ < (tol), qPrintable(QString("%1: relative error %2").arg(name).arg(e_))); \
  } while (0)

// ---- double-precision references of the forwards ----

Vec ref_layernorm(const Vec& x, const Vec& w, const Vec& b, int N, int C, double eps) {
  Vec out(x.size());
  for (int n = 0; n < N; ++n) {
    double m = 0, v = 0;
    for (int i = 0; i < C; ++i) m += x[n * C + i];
    m /= C;
    for (int i = 0; i < C; ++i) v += (x[n * C + i] - m) * (x[n * C + i] - m);
    v /= C;
    for (int i = 0; i < C; ++i)
      out[n * C + i] = (x[n * C + i] - m) / std::sqrt(v + eps) * w[i] + (b.empty() ? 0 : b[i]);
  }
  return out;
}

Vec ref_rmsnorm(const Vec& x, const Vec& w, int N, int C, double eps) {
  Vec out(x.size());
  for (int n = 0; n < N; ++n) {
    double ss = 0;
    for (int i = 0; i < C; ++i) ss += x[n * C + i] * x[n * C + i];
    const double r = 1.0 / std::sqrt(ss / C + eps);
    for (int i = 0; i < C; ++i) out[n * C + i] = x[n * C + i] * r * w[i];
  }
  return out;
}

Vec ref_matmul(const Vec& x, const Vec& w, const Vec& b, int N, int C, int OC) {
  Vec out(size_t(N) * OC);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      double s = b.empty() ? 0 : b[o];
      for (int i = 0; i < C; ++i) s += x[size_t(n) * C + i] * w[size_t(o) * C + i];
      out[size_t(n) * OC + o] = s;
    }
  return out;
}

// Rotates T rows of `heads` heads (row stride `stride`) at positions pos0.. (rope_forward's definition).
Vec ref_rope(Vec x, int stride, int heads, int T, int HS, int pos0, double theta, bool interleaved) {
  const int half = HS / 2, step = interleaved ? 2 : 1, off = interleaved ? 1 : half;
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < half; ++i) {
        const double a = (pos0 + t) * std::pow(theta, -2.0 * i / HS);
        double* v = x.data() + size_t(t) * stride + size_t(h) * HS;
        const double p = v[i * step], q = v[i * step + off];
        v[i * step] = p * std::cos(a) - q * std::sin(a);
        v[i * step + off] = q * std::cos(a) + p * std::sin(a);
      }
  return x;
}

double ref_gelu(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double ref_silu(double x) { return x / (1 + std::exp(-x)); }

// Causal attention over B sequences (attention_train_forward's definition); q (B*T, NH*HS) stride qs,
// k/v (B*T, KVH*HS) stride kvs. `keep(b,h,t,j)` is the dropout scale of probability (b,h,t,j).
struct AttShape {
  int B, T, NH, KVH, HS, qs, kvs;
};
Vec ref_attention(const AttShape& s, const Vec& q, const Vec& k, const Vec& v, Vec* probs,
                  const std::function<double(int64_t)>& keep) {
  Vec out(size_t(s.B) * s.T * s.NH * s.HS, 0.0);
  if (probs) probs->assign(size_t(s.B) * s.NH * s.T * s.T, 0.0);
  const int group = s.NH / s.KVH;
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.NH; ++h)
      for (int t = 0; t < s.T; ++t) {
        const int kvh = h / group;
        Vec sc(t + 1);
        double mx = -1e300;
        for (int j = 0; j <= t; ++j) {
          double d = 0;
          for (int i = 0; i < s.HS; ++i)
            d += q[size_t(b * s.T + t) * s.qs + h * s.HS + i] * k[size_t(b * s.T + j) * s.kvs + kvh * s.HS + i];
          sc[j] = d / std::sqrt(double(s.HS));
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (int j = 0; j <= t; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
        const int64_t arow = (int64_t(b) * s.NH + h) * s.T + t;
        for (int j = 0; j <= t; ++j) {
          const double p = sc[j] / sum;
          if (probs) (*probs)[arow * s.T + j] = p;
          const double w = p * keep(arow * s.T + j);
          for (int i = 0; i < s.HS; ++i)
            out[size_t(b * s.T + t) * s.NH * s.HS + h * s.HS + i] +=
                w * v[size_t(b * s.T + j) * s.kvs + kvh * s.HS + i];
        }
      }
  return out;
}

// Per-row smoothed cross-entropy (PyTorch's definition), 0 for negative targets.
Vec ref_xent(const Vec& z, const std::vector<int32_t>& tg, int N, int V, double e) {
  Vec loss(N, 0.0);
  for (int n = 0; n < N; ++n) {
    if (tg[n] < 0) continue;
    double mx = -1e300, sum = 0, mean_nlp = 0;
    for (int i = 0; i < V; ++i) mx = std::max(mx, z[size_t(n) * V + i]);
    for (int i = 0; i < V; ++i) sum += std::exp(z[size_t(n) * V + i] - mx);
    const double lse = mx + std::log(sum);
    for (int i = 0; i < V; ++i) mean_nlp += (lse - z[size_t(n) * V + i]) / V;
    loss[n] = (1 - e) * (lse - z[size_t(n) * V + tg[n]]) + e * mean_nlp;
  }
  return loss;
}

// Per row: the entropy of softmax(z), -sum p log p with log p = z - logsumexp(z); 0 where the target is negative.
Vec ref_entropy(const Vec& z, const std::vector<int32_t>& tg, int N, int V) {
  Vec H(N, 0.0);
  for (int n = 0; n < N; ++n) {
    if (tg[n] < 0) continue;
    double mx = -1e300, sum = 0;
    for (int i = 0; i < V; ++i) mx = std::max(mx, z[size_t(n) * V + i]);
    for (int i = 0; i < V; ++i) sum += std::exp(z[size_t(n) * V + i] - mx);
    const double lse = mx + std::log(sum);
    for (int i = 0; i < V; ++i) {
      const double logp = z[size_t(n) * V + i] - lse;
      H[n] -= std::exp(logp) * logp;
    }
  }
  return H;
}

}  // namespace

class TestBackwardOps : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = engine::make_cpu_backend(2);

 private slots:
  void encoder_backward() {
    for (uint32_t seed : {1u, 2u, 3u}) {
      const int B = 2, T = 5, C = 37, V = 11, maxT = 8;
      // Repeated tokens (within and across rows) must collect every row's gradient.
      std::vector<int32_t> tok = {3, 7, 3, 0, 10, 7, 7, 1, 3, 9};
      const auto g = random_vec(size_t(B) * T * C, seed);
      const auto base_te = random_vec(size_t(V) * C, seed + 10), base_pe = random_vec(size_t(maxT) * C, seed + 20);
      auto dte = base_te, dpe = base_pe;
      m_be->encoder_backward(dte.data(), dpe.data(), g.data(), tok.data(), B, T, C);
      auto f = [&](const std::vector<Vec>& in) {
        Vec out(size_t(B) * T * C);
        for (int n = 0; n < B * T; ++n)
          for (int i = 0; i < C; ++i) out[n * C + i] = in[0][size_t(tok[n]) * C + i] + in[1][size_t(n % T) * C + i];
        return out;
      };
      const std::vector<Vec> in = {to_d(random_vec(size_t(V) * C, seed + 30)),
                                   to_d(random_vec(size_t(maxT) * C, seed + 40))};
      CHECK_GRAD("dwte", dte, base_te, finite_diff(f, in, 0, to_d(g)), 1e-6);
      CHECK_GRAD("dwpe", dpe, base_pe, finite_diff(f, in, 1, to_d(g)), 1e-6);
      // Without positions (rotary models) only wte is touched.
      auto dte2 = base_te;
      m_be->encoder_backward(dte2.data(), nullptr, g.data(), tok.data(), B, T, C);
      QCOMPARE(dte2, dte);
    }
  }

  void layernorm_backward_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::addColumn<bool>("bias");
    QTest::newRow("1x16") << 1 << 16 << true;
    QTest::newRow("7x33") << 7 << 33 << true;
    QTest::newRow("5x40 no bias") << 5 << 40 << false;
  }
  void layernorm_backward() {
    QFETCH(int, N);
    QFETCH(int, C);
    QFETCH(bool, bias);
    for (uint32_t seed : {1u, 2u, 3u}) {
      const float eps = 1e-5f;
      const auto x = random_vec(size_t(N) * C, seed, 2.0f), w = random_vec(C, seed + 1), b = random_vec(C, seed + 2);
      const auto g = random_vec(size_t(N) * C, seed + 3);
      std::vector<float> out(x.size()), mean(N), rstd(N);
      m_be->layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), bias ? b.data() : nullptr, N, C,
                              eps);
      const auto bx = random_vec(x.size(), seed + 4), bw = random_vec(C, seed + 5), bb = random_vec(C, seed + 6);
      auto dx = bx, dw = bw, db = bb;
      m_be->layernorm_backward(dx.data(), dw.data(), bias ? db.data() : nullptr, g.data(), x.data(), w.data(),
                               mean.data(), rstd.data(), N, C);
      auto f = [&](const std::vector<Vec>& in) { return ref_layernorm(in[0], in[1], in[2], N, C, eps); };
      const std::vector<Vec> in = {to_d(x), to_d(w), to_d(b)};
      CHECK_GRAD("dinp", dx, bx, finite_diff(f, in, 0, to_d(g)), 2e-5);
      CHECK_GRAD("dweight", dw, bw, finite_diff(f, in, 1, to_d(g)), 2e-5);
      if (bias) CHECK_GRAD("dbias", db, bb, finite_diff(f, in, 2, to_d(g)), 2e-5);
      else QCOMPARE(db, bb);
      // Frozen gains (LoRA): no dweight/dbias, the same dinp.
      auto dx2 = bx;
      m_be->layernorm_backward(dx2.data(), nullptr, nullptr, g.data(), x.data(), w.data(), mean.data(), rstd.data(), N,
                               C);
      QCOMPARE(dx2, dx);
    }
  }

  void rmsnorm_backward() {
    for (auto [N, C] : {std::pair{1, 16}, std::pair{6, 33}, std::pair{9, 64}})
      for (uint32_t seed : {1u, 2u, 3u}) {
        const float eps = 1e-5f;
        const auto x = random_vec(size_t(N) * C, seed, 2.0f), w = random_vec(C, seed + 1);
        const auto g = random_vec(size_t(N) * C, seed + 3);
        std::vector<float> out(x.size()), rstd(N);
        m_be->rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, eps);
        const auto bx = random_vec(x.size(), seed + 4), bw = random_vec(C, seed + 5);
        auto dx = bx, dw = bw;
        m_be->rmsnorm_backward(dx.data(), dw.data(), g.data(), x.data(), w.data(), rstd.data(), N, C);
        auto f = [&](const std::vector<Vec>& in) { return ref_rmsnorm(in[0], in[1], N, C, eps); };
        const std::vector<Vec> in = {to_d(x), to_d(w)};
        CHECK_GRAD("dinp", dx, bx, finite_diff(f, in, 0, to_d(g)), 2e-5);
        CHECK_GRAD("dweight", dw, bw, finite_diff(f, in, 1, to_d(g)), 2e-5);
        auto dx2 = bx;
        m_be->rmsnorm_backward(dx2.data(), nullptr, g.data(), x.data(), w.data(), rstd.data(), N, C);
        QCOMPARE(dx2, dx);
      }
  }

  void matmul_backward_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    QTest::newRow("1x8x5") << 1 << 8 << 5;
    QTest::newRow("5x33x29") << 5 << 33 << 29;
    QTest::newRow("12x48x64") << 12 << 48 << 64;
  }
  void matmul_backward() {
    QFETCH(int, N);
    QFETCH(int, C);
    QFETCH(int, OC);
    for (uint32_t seed : {1u, 2u}) {
      const auto x = random_vec(size_t(N) * C, seed), w = random_vec(size_t(OC) * C, seed + 1),
                 b = random_vec(OC, seed + 2);
      const auto g = random_vec(size_t(N) * OC, seed + 3);
      const auto bx = random_vec(x.size(), seed + 4), bw = random_vec(w.size(), seed + 5),
                 bb = random_vec(OC, seed + 6);
      auto dx = bx, dw = bw, db = bb;
      m_be->matmul_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(), N, C, OC);
      auto f = [&](const std::vector<Vec>& in) { return ref_matmul(in[0], in[1], in[2], N, C, OC); };
      const std::vector<Vec> in = {to_d(x), to_d(w), to_d(b)};
      CHECK_GRAD("dinp", dx, bx, finite_diff(f, in, 0, to_d(g)), 1e-5);
      CHECK_GRAD("dweight", dw, bw, finite_diff(f, in, 1, to_d(g)), 1e-5);
      CHECK_GRAD("dbias", db, bb, finite_diff(f, in, 2, to_d(g)), 1e-5);
      // Null gradients are skipped: only dweight asked for.
      auto dw2 = bw;
      m_be->matmul_backward(nullptr, dw2.data(), nullptr, g.data(), x.data(), w.data(), N, C, OC);
      QCOMPARE(dw2, dw);
    }
  }

  void rope_backward_data() {
    QTest::addColumn<bool>("interleaved");
    QTest::newRow("rotate-half") << false;
    QTest::newRow("interleaved") << true;
  }
  void rope_backward() {
    QFETCH(bool, interleaved);
    const int T = 5, NH = 4, KVH = 2, HS = 8, pos0 = 3;
    const int qs = NH * HS + 3, ks = KVH * HS + 5;  // strided rows, as in fused layouts
    const float theta = 10000.0f;
    for (uint32_t seed : {1u, 2u, 3u}) {
      const auto gq = random_vec(size_t(T) * qs, seed), gk = random_vec(size_t(T) * ks, seed + 1);
      auto dq = gq, dk = gk;  // rope_backward works in place on the incoming gradients
      m_be->rope_backward(dq.data(), qs, NH, dk.data(), ks, KVH, T, HS, pos0, theta, interleaved);
      const std::vector<Vec> in = {to_d(random_vec(gq.size(), seed + 2)), to_d(random_vec(gk.size(), seed + 3))};
      auto fq = [&](const std::vector<Vec>& v) { return ref_rope(v[0], qs, NH, T, HS, pos0, theta, interleaved); };
      auto fk = [&](const std::vector<Vec>& v) { return ref_rope(v[1], ks, KVH, T, HS, pos0, theta, interleaved); };
      const std::vector<float> zq(dq.size(), 0.f), zk(dk.size(), 0.f);
      // Padding columns of a row are not rotated: their gradient passes through (d out / d in = 1).
      CHECK_GRAD("dq", dq, zq, finite_diff(fq, in, 0, to_d(gq)), 1e-5);
      CHECK_GRAD("dk", dk, zk, finite_diff(fk, in, 1, to_d(gk)), 1e-5);
    }
  }

  void gelu_swiglu_residual_backward() {
    for (uint32_t seed : {1u, 2u, 3u}) {
      const int n = 203;
      const auto x = random_vec(n, seed, 3.0f), u = random_vec(n, seed + 1, 2.0f), g = random_vec(n, seed + 2);
      const auto b1 = random_vec(n, seed + 3), b2 = random_vec(n, seed + 4);
      // gelu
      auto dx = b1;
      m_be->gelu_backward(dx.data(), x.data(), g.data(), n);
      auto fg = [&](const std::vector<Vec>& in) {
        Vec o(n);
        for (int i = 0; i < n; ++i) o[i] = ref_gelu(in[0][i]);
        return o;
      };
      CHECK_GRAD("gelu", dx, b1, finite_diff(fg, {to_d(x)}, 0, to_d(g)), 1e-5);
      // swiglu
      auto dgate = b1, dup = b2;
      m_be->swiglu_backward(dgate.data(), dup.data(), g.data(), x.data(), u.data(), n);
      auto fs = [&](const std::vector<Vec>& in) {
        Vec o(n);
        for (int i = 0; i < n; ++i) o[i] = ref_silu(in[0][i]) * in[1][i];
        return o;
      };
      const std::vector<Vec> in = {to_d(x), to_d(u)};
      CHECK_GRAD("swiglu dgate", dgate, b1, finite_diff(fs, in, 0, to_d(g)), 1e-5);
      CHECK_GRAD("swiglu dup", dup, b2, finite_diff(fs, in, 1, to_d(g)), 1e-5);
      // residual
      auto da = b1, db = b2;
      m_be->residual_backward(da.data(), db.data(), g.data(), n);
      auto fr = [&](const std::vector<Vec>& v) {
        Vec o(n);
        for (int i = 0; i < n; ++i) o[i] = v[0][i] + v[1][i];
        return o;
      };
      CHECK_GRAD("residual da", da, b1, finite_diff(fr, in, 0, to_d(g)), 1e-6);
      CHECK_GRAD("residual db", db, b2, finite_diff(fr, in, 1, to_d(g)), 1e-6);
    }
  }

  void dropout_forward_backward() {
    const int64_t n = 20000;
    const auto x = random_vec(n, 7);
    for (float p : {0.1f, 0.5f}) {
      std::vector<float> out(n), out2(n), other(n);
      m_be->dropout_forward(out.data(), x.data(), n, p, 42);
      m_be->dropout_forward(out2.data(), x.data(), n, p, 42);
      m_be->dropout_forward(other.data(), x.data(), n, p, 43);
      QCOMPARE(out, out2);  // same seed, same mask
      QVERIFY(out != other);
      int64_t dropped = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (out[i] == 0.f) {
          ++dropped;
        } else {
          QCOMPARE(out[i], x[i] * (1.0f / (1.0f - p)));  // kept values are scaled by exactly 1/(1-p)
        }
      }
      // Binomial(n, p): within 5 standard deviations.
      const double sd = std::sqrt(n * p * (1 - p));
      QVERIFY2(std::abs(dropped - n * p) < 5 * sd, qPrintable(QString::number(dropped)));
      // The backward applies the forward's mask: dinp_i = g_i * out_i / x_i.
      const auto g = random_vec(n, 8);
      std::vector<float> dx(n);
      m_be->dropout_backward(dx.data(), g.data(), n, p, 42);
      for (int64_t i = 0; i < n; ++i) QCOMPARE(dx[i], g[i] * (out[i] / x[i]));
      // In place gives the same.
      auto inplace = x;
      m_be->dropout_forward(inplace.data(), inplace.data(), n, p, 42);
      QCOMPARE(inplace, out);
    }
    std::vector<float> copy(n);
    m_be->dropout_forward(copy.data(), x.data(), n, 0.0f, 42);
    QCOMPARE(copy, x);
  }

  void attention_train_data() {
    QTest::addColumn<int>("B");
    QTest::addColumn<int>("T");
    QTest::addColumn<int>("NH");
    QTest::addColumn<int>("KVH");
    QTest::addColumn<bool>("fused");
    QTest::addColumn<float>("dropout");
    QTest::newRow("gpt2 fused qkv rows") << 2 << 5 << 3 << 3 << true << 0.0f;
    QTest::newRow("gqa 4 over 2") << 2 << 6 << 4 << 2 << false << 0.0f;
    QTest::newRow("mqa 4 over 1, one row") << 3 << 1 << 4 << 1 << false << 0.0f;
    QTest::newRow("gqa with dropout") << 2 << 5 << 4 << 2 << false << 0.3f;
    QTest::newRow("fused with dropout") << 1 << 7 << 2 << 2 << true << 0.5f;
  }
  void attention_train() {
    QFETCH(int, B);
    QFETCH(int, T);
    QFETCH(int, NH);
    QFETCH(int, KVH);
    QFETCH(bool, fused);
    QFETCH(float, dropout);
    const int HS = 4, C = NH * HS, KVW = KVH * HS, N = B * T;
    const uint64_t seed = 99;
    for (uint32_t s : {1u, 2u}) {
      // fused: one (N, C + 2 KVW) buffer read through strides; else separate q (N,C), k, v (N,KVW).
      std::vector<float> qkv = random_vec(size_t(N) * (C + 2 * KVW), s), q, k, v;
      const int qs = fused ? C + 2 * KVW : C, kvs = fused ? C + 2 * KVW : KVW;
      const float *qp, *kp, *vp;
      if (fused) {
        qp = qkv.data();
        kp = qkv.data() + C;
        vp = qkv.data() + C + KVW;
      } else {
        q = random_vec(size_t(N) * C, s + 10);
        k = random_vec(size_t(N) * KVW, s + 11);
        v = random_vec(size_t(N) * KVW, s + 12);
        qp = q.data();
        kp = k.data();
        vp = v.data();
      }
      const AttShape sh{B, T, NH, KVH, HS, qs, kvs};
      auto keep = [&](int64_t i) {
        return dropout > 0 ? double(engine::dropout_scale(seed, uint64_t(i), dropout)) : 1.0;
      };
      // The reference reads its inputs with the same strides: (N, stride) double copies of the used columns.
      auto gather = [&](const float* p, int stride, int width) {
        Vec d(size_t(N) * stride, 0.0);
        for (int r = 0; r < N; ++r)
          for (int c = 0; c < width; ++c) d[size_t(r) * stride + c] = p[size_t(r) * stride + c];
        return d;
      };
      const std::vector<Vec> in = {gather(qp, qs, C), gather(kp, kvs, KVW), gather(vp, kvs, KVW)};
      Vec probs;
      const Vec want = ref_attention(sh, in[0], in[1], in[2], &probs, keep);

      std::vector<float> out(size_t(N) * C), att(size_t(B) * NH * T * T, -1.f);
      m_be->attention_train_forward(out.data(), att.data(), qp, qs, kp, vp, kvs, B, T, NH, KVH, HS, dropout, seed);
      QVERIFY2(max_rel_err(out, want) < 1e-5, qPrintable(QString("out %1").arg(max_rel_err(out, want))));
      QVERIFY2(max_rel_err(att, probs) < 1e-6, qPrintable(QString("att %1").arg(max_rel_err(att, probs))));

      if (dropout == 0 && !fused) {
        // The same function as the inference op: each sequence alone through attention_forward (P = 0). The
        // training op runs as matrix products (another summation order), so to the reference's tolerance.
        std::vector<float> inf(size_t(T) * C);
        for (int b = 0; b < B; ++b) {
          m_be->attention_forward(inf.data(), qp + size_t(b) * T * qs, qs, kp + size_t(b) * T * kvs,
                                  vp + size_t(b) * T * kvs, 0, T, NH, KVH, HS, nullptr);
          const std::vector<float> mine(out.begin() + ptrdiff_t(b) * T * C, out.begin() + ptrdiff_t(b + 1) * T * C);
          QVERIFY2(max_rel_err(mine, to_d(inf)) < 1e-5,
                   qPrintable(QString("vs inference %1").arg(max_rel_err(mine, to_d(inf)))));
        }
      }

      const auto g = random_vec(out.size(), s + 20);
      // Gradient buffers with the input layouts; fused: one buffer, so q/k/v gradients share rows.
      const size_t qn = in[0].size(), kn = in[1].size();
      std::vector<float> base = random_vec(fused ? qkv.size() : qn + 2 * kn, s + 21), d = base;
      float* dqp = d.data();
      float* dkp = fused ? d.data() + C : d.data() + qn;
      float* dvp = fused ? d.data() + C + KVW : d.data() + qn + kn;
      m_be->attention_backward(dqp, dkp, dvp, g.data(), att.data(), qp, qs, kp, vp, kvs, B, T, NH, KVH, HS, dropout,
                               seed);
      auto f = [&](const std::vector<Vec>& x) { return ref_attention(sh, x[0], x[1], x[2], nullptr, keep); };
      for (int which = 0; which < 3; ++which) {
        const Vec fd = finite_diff(f, in, which, to_d(g));
        const int stride = which == 0 ? qs : kvs, width = which == 0 ? C : KVW;
        const size_t off = fused ? (which == 0   ? 0
                                    : which == 1 ? C
                                                 : C + KVW)
                                 : (which == 0   ? 0
                                    : which == 1 ? qn
                                                 : qn + kn);
        // Compare the used columns of every row (the fused buffer's other columns belong to the other two).
        std::vector<float> got, b0;
        Vec want_g;
        for (int r = 0; r < N; ++r)
          for (int c = 0; c < width; ++c) {
            got.push_back(d[off + size_t(r) * stride + c]);
            b0.push_back(base[off + size_t(r) * stride + c]);
            want_g.push_back(fd[size_t(r) * stride + c]);
          }
        CHECK_GRAD(QString("d%1").arg("qkv"[which]), got, b0, want_g, 2e-5);
      }
    }
  }

  void softmax_xent() {
    for (float e : {0.0f, 0.1f}) {
      for (uint32_t seed : {1u, 2u, 3u}) {
        const int N = 6, V = 37;
        const auto z = random_vec(size_t(N) * V, seed, 4.0f);
        std::vector<int32_t> tg = {0, 36, -1, 5, 5, -100};
        std::vector<float> probs = z, losses(N, -1.f);
        m_be->softmax_xent_forward(losses.data(), nullptr, probs.data(), tg.data(), N, V, e);
        const Vec want = ref_xent(to_d(z), tg, N, V, e);
        QVERIFY2(max_rel_err(losses, want) < 1e-6, qPrintable(QString::number(max_rel_err(losses, want))));
        for (int n = 0; n < N; ++n) {
          double s = 0;
          for (int i = 0; i < V; ++i) s += probs[size_t(n) * V + i];
          QVERIFY(std::abs(s - 1) < 1e-5);
        }
        // Backward with per-row loss gradients, including rows whose target is negative.
        const auto dl = random_vec(N, seed + 1);
        std::vector<float> dz = probs;
        m_be->softmax_xent_backward(dz.data(), dz.data(), tg.data(), dl.data(), nullptr, nullptr, N, V, e);
        auto f = [&](const std::vector<Vec>& in) { return ref_xent(in[0], tg, N, V, e); };
        const std::vector<float> zero(dz.size(), 0.f);
        CHECK_GRAD("dlogits", dz, zero, finite_diff(f, {to_d(z)}, 0, to_d(dl)), 1e-5);
      }
    }
    // Extreme logits: the loss comes from log-sum-exp, finite even when p[target] underflows.
    std::vector<float> z = {0.f, 200.f, -200.f}, l(1);
    std::vector<int32_t> t = {2};
    m_be->softmax_xent_forward(l.data(), nullptr, z.data(), t.data(), 1, 3, 0.0f);
    QVERIFY(std::abs(l[0] - 400.f) < 1e-3);
  }

  // The per-row entropy beside the loss, and the backward of dlosses * loss + dentropy * entropy, against double
  // references and central differences; rows whose target is negative get neither. V = 37 and 45 run the
  // eight-lane loop's tail.
  void softmax_xent_entropy() {
    for (int V : {37, 45}) {
      for (uint32_t seed : {1u, 2u, 3u}) {
        const int N = 6;
        const auto z = random_vec(size_t(N) * V, seed, 4.0f);
        std::vector<int32_t> tg = {0, V - 1, -1, 5, 5, -100};
        std::vector<float> probs = z, losses(N, -1.f), H(N, -1.f);
        m_be->softmax_xent_forward(losses.data(), H.data(), probs.data(), tg.data(), N, V, 0.1f);
        const Vec want = ref_entropy(to_d(z), tg, N, V);
        QVERIFY2(max_rel_err(H, want) < 1e-6, qPrintable(QString::number(max_rel_err(H, want))));
        QCOMPARE(H[2], 0.0f);
        const Vec want_loss = ref_xent(to_d(z), tg, N, V, 0.1);
        QVERIFY(max_rel_err(losses, want_loss) < 1e-6);  // the loss is unchanged by asking for the entropy
        const auto dl = random_vec(N, seed + 1), dh = random_vec(N, seed + 2);
        std::vector<float> dz = probs;
        m_be->softmax_xent_backward(dz.data(), dz.data(), tg.data(), dl.data(), H.data(), dh.data(), N, V, 0.1f);
        auto f = [&](const std::vector<Vec>& in) {
          const Vec loss = ref_xent(in[0], tg, N, V, 0.1), ent = ref_entropy(in[0], tg, N, V);
          Vec out = loss;
          out.insert(out.end(), ent.begin(), ent.end());
          return out;
        };
        Vec g = to_d(dl);
        for (float x : dh) g.push_back(x);
        const std::vector<float> zero(dz.size(), 0.f);
        CHECK_GRAD("dlogits", dz, zero, finite_diff(f, {to_d(z)}, 0, g), 1e-5);
      }
    }
    // A row whose distribution is one-hot to float precision: entropy 0 (not negative, not NaN) and a finite
    // gradient; a flat row: log V and no entropy gradient (the maximum).
    std::vector<float> z = {0.f, 200.f, -200.f, 1.f, 1.f, 1.f}, l(2), H(2);
    std::vector<int32_t> t = {2, 0};
    m_be->softmax_xent_forward(l.data(), H.data(), z.data(), t.data(), 2, 3, 0.0f);
    QVERIFY(H[0] >= 0.0f && H[0] < 1e-6f);
    QVERIFY(std::abs(H[1] - std::log(3.0f)) < 1e-6f);
    const std::vector<float> zero_dl = {0.f, 0.f}, dh = {1.f, 1.f};
    m_be->softmax_xent_backward(z.data(), z.data(), t.data(), zero_dl.data(), H.data(), dh.data(), 2, 3, 0.0f);
    for (float d : z) QVERIFY(std::isfinite(d) && std::abs(d) < 1e-6f);
  }
};

QTEST_APPLESS_MAIN(TestBackwardOps)
#include "test_backward_ops.moc"
