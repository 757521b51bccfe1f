// Every CPU backend op against a naive double-precision reference, over shapes that hit each code
// path (single-row matvec vs sgemm, sizes not multiple of the SIMD width, KV-cache offsets, GQA).
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/fast_math.h"
#include "engine/backend.h"
#include "support/op_reference.h"

using engine::Backend;

namespace {}  // namespace

class TestBackendOps : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = engine::make_cpu_backend(2);

 private slots:
  void matmul_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    QTest::addColumn<bool>("bias");
    QTest::newRow("matvec 1x64x96") << 1 << 64 << 96 << true;
    QTest::newRow("matvec odd 1x67x13") << 1 << 67 << 13 << true;
    QTest::newRow("matvec no bias 1x128x7") << 1 << 128 << 7 << false;
    // From 2 rows: the f32 panel GEMM (cpu_gemm_f32.cpp) where the build has AVX2, sgemm elsewhere.
    // Mostly empty panels, a token panel past 16, 256-token blocks, column chunks with a tail, C = 1,
    // row blocks and tiles with remainders.
    QTest::newRow("2 rows 2x64x96") << 2 << 64 << 96 << true;
    QTest::newRow("5 rows 5x64x96") << 5 << 64 << 96 << true;
    QTest::newRow("15 rows 15x33x29") << 15 << 33 << 29 << false;
    QTest::newRow("panels 16x16x16") << 16 << 16 << 16 << true;
    QTest::newRow("panels odd 17x33x29") << 17 << 33 << 29 << false;
    QTest::newRow("panels 64x256x384") << 64 << 256 << 384 << true;
    QTest::newRow("panels 33x1x13") << 33 << 1 << 13 << true;
    QTest::newRow("panels 300x40x100") << 300 << 40 << 100 << false;
    QTest::newRow("panels 40x1100x7") << 40 << 1100 << 7 << true;
  }
  void matmul() {
    QFETCH(int, N);
    QFETCH(int, C);
    QFETCH(int, OC);
    QFETCH(bool, bias);
    const auto x = random_vec(size_t(N) * C, 1), w = random_vec(size_t(OC) * C, 2), b = random_vec(OC, 3);
    std::vector<float> out(size_t(N) * OC);
    m_be->matmul_forward(out.data(), x.data(), w.data(), bias ? b.data() : nullptr, N, C, OC);
    std::vector<double> ref(out.size());
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) {
        double s = bias ? b[o] : 0.0;
        for (int i = 0; i < C; ++i) s += double(x[size_t(n) * C + i]) * w[size_t(o) * C + i];
        ref[size_t(n) * OC + o] = s;
      }
    // f32 accumulation error grows like sqrt(C) ulps.
    const double tol = 2e-6 * std::sqrt(double(C)) + 1e-6;
    QVERIFY2(max_rel_err(out, ref) < tol, qPrintable(QString::number(max_rel_err(out, ref))));
  }

  // Each output of the f32 prefill product is summed in the same order however the rows are split
  // between threads, so 1, 2 and 5 threads agree bit for bit (a run is reproducible on any machine
  // size with the same build).
  void matmul_same_bits_for_any_thread_count() {
    const int N = 37, C = 300, OC = 211;
    const auto x = random_vec(size_t(N) * C, 7), w = random_vec(size_t(OC) * C, 8), b = random_vec(OC, 9);
    std::vector<float> first;
    for (int threads : {1, 2, 5}) {
      std::vector<float> out(size_t(N) * OC);
      engine::make_cpu_backend(threads)->matmul_forward(out.data(), x.data(), w.data(), b.data(), N, C, OC);
      if (first.empty()) first = out;
      QVERIFY2(out == first, qPrintable(QString("%1 threads").arg(threads)));
    }
  }

  void layernorm_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::newRow("1x64") << 1 << 64;
    QTest::newRow("7x33") << 7 << 33;
    QTest::newRow("16x768") << 16 << 768;
  }
  void layernorm() {
    QFETCH(int, N);
    QFETCH(int, C);
    auto x = random_vec(size_t(N) * C, 4, 3.0f);
    for (auto& v : x) v += 5.0f;  // a large mean checks the variance is computed around it
    const auto w = random_vec(C, 5), b = random_vec(C, 6);
    std::vector<float> out(x.size()), mean(N), rstd(N);
    m_be->layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C, 1e-5f);
    std::vector<double> ref(out.size());
    for (int n = 0; n < N; ++n) {
      double m = 0, v = 0;
      for (int i = 0; i < C; ++i) m += x[size_t(n) * C + i];
      m /= C;
      for (int i = 0; i < C; ++i) v += (x[size_t(n) * C + i] - m) * (x[size_t(n) * C + i] - m);
      v /= C;
      const double s = 1.0 / std::sqrt(v + 1e-5);
      QVERIFY(std::abs(mean[n] - m) < 1e-4 * (1 + std::abs(m)));
      QVERIFY(std::abs(rstd[n] - s) < 1e-4 * s);
      for (int i = 0; i < C; ++i) ref[size_t(n) * C + i] = (x[size_t(n) * C + i] - m) * s * w[i] + b[i];
    }
    QVERIFY2(max_rel_err(out, ref) < 1e-5, qPrintable(QString::number(max_rel_err(out, ref))));
  }

  void rmsnorm_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::newRow("1x64") << 1 << 64;
    QTest::newRow("7x33") << 7 << 33;
    QTest::newRow("16x2048") << 16 << 2048;
  }
  void rmsnorm() {
    QFETCH(int, N);
    QFETCH(int, C);
    const auto x = random_vec(size_t(N) * C, 40, 3.0f), w = random_vec(C, 41);
    const float eps = 1e-5f;
    std::vector<float> out(x.size()), rstd(N);
    m_be->rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, eps);
    std::vector<double> ref(out.size()), ref_rstd(N);
    for (int n = 0; n < N; ++n) {
      double ss = 0;
      for (int i = 0; i < C; ++i) ss += double(x[size_t(n) * C + i]) * x[size_t(n) * C + i];
      const double r = 1.0 / std::sqrt(ss / C + eps);
      ref_rstd[n] = r;
      for (int i = 0; i < C; ++i) ref[size_t(n) * C + i] = x[size_t(n) * C + i] * r * w[i];
    }
    QVERIFY2(max_rel_err(out, ref) < 1e-5, qPrintable(QString::number(max_rel_err(out, ref))));
    QVERIFY(max_rel_err(rstd, ref_rstd) < 1e-5);
    // In place (the runner may normalise a buffer onto itself).
    std::vector<float> inplace = x;
    m_be->rmsnorm_forward(inplace.data(), nullptr, inplace.data(), w.data(), N, C, eps);
    QCOMPARE(inplace, out);
  }

  void rope_data() {
    QTest::addColumn<bool>("interleaved");
    QTest::addColumn<int>("pos0");
    QTest::addColumn<int>("T");
    QTest::addColumn<float>("theta");
    QTest::newRow("half, prefill") << false << 0 << 9 << 10000.0f;
    QTest::newRow("half, decode at 37") << false << 37 << 1 << 10000.0f;
    QTest::newRow("half, theta 1e6 at 1000") << false << 1000 << 3 << 1e6f;
    QTest::newRow("interleaved, prefill") << true << 0 << 9 << 10000.0f;
    QTest::newRow("interleaved, decode at 37") << true << 37 << 1 << 500000.0f;
  }
  void rope() {
    QFETCH(bool, interleaved);
    QFETCH(int, pos0);
    QFETCH(int, T);
    QFETCH(float, theta);
    // GQA shapes, and strides wider than the rows (q inside a fused buffer) to check they are honoured.
    const int NH = 4, KVH = 2, HS = 16, q_stride = NH * HS + 8, k_stride = KVH * HS + 3;
    auto q = random_vec(size_t(T) * q_stride, 42), k = random_vec(size_t(T) * k_stride, 43);
    const auto q0 = q, k0 = k;
    m_be->rope_forward(q.data(), q_stride, NH, k.data(), k_stride, KVH, T, HS, pos0, theta, interleaved);
    // Reference: rotate each pair (a, b) by angle pos * theta^(-2i/HS), in double.
    auto reference = [&](const std::vector<float>& src, int stride, int heads) {
      std::vector<double> r(src.begin(), src.end());
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < heads; ++h)
          for (int i = 0; i < HS / 2; ++i) {
            const size_t base = size_t(t) * stride + size_t(h) * HS;
            const size_t ia = base + (interleaved ? 2 * i : i), ib = base + (interleaved ? 2 * i + 1 : i + HS / 2);
            const double ang = (pos0 + t) * std::pow(double(theta), -2.0 * i / HS);
            r[ia] = src[ia] * std::cos(ang) - src[ib] * std::sin(ang);
            r[ib] = src[ib] * std::cos(ang) + src[ia] * std::sin(ang);
          }
      return r;
    };
    QVERIFY2(max_rel_err(q, reference(q0, q_stride, NH)) < 2e-6,
             qPrintable(QString::number(max_rel_err(q, reference(q0, q_stride, NH)))));
    QVERIFY(max_rel_err(k, reference(k0, k_stride, KVH)) < 2e-6);
    // The padding between rows is untouched.
    for (int t = 0; t < T; ++t)
      for (int i = NH * HS; i < q_stride; ++i) QCOMPARE(q[size_t(t) * q_stride + i], q0[size_t(t) * q_stride + i]);
    // Position 0 is the identity.
    if (pos0 == 0)
      for (int i = 0; i < NH * HS; ++i) QCOMPARE(q[i], q0[i]);
    // k may be null (only q rotated).
    auto q2 = q0;
    m_be->rope_forward(q2.data(), q_stride, NH, nullptr, 0, KVH, T, HS, pos0, theta, interleaved);
    QCOMPARE(q2, q);
  }

  void swiglu() {
    const int64_t n = 1003;
    auto g = random_vec(n, 44, 4.0f), u = random_vec(n, 45);
    g[0] = -100.0f, g[1] = 100.0f, g[2] = 0.0f;  // saturated and zero inputs
    std::vector<float> out(n);
    m_be->swiglu_forward(out.data(), g.data(), u.data(), n);
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) ref[i] = double(g[i]) / (1.0 + std::exp(-double(g[i]))) * u[i];
    QVERIFY2(max_rel_err(out, ref) < 1e-6, qPrintable(QString::number(max_rel_err(out, ref))));
    // out may alias up (the runner writes over the up projection).
    m_be->swiglu_forward(u.data(), g.data(), u.data(), n);
    QCOMPARE(u, out);
  }

  void gelu() {
    const auto x = random_vec(1001, 7, 3.0f);
    std::vector<float> out(x.size());
    m_be->gelu_forward(out.data(), x.data(), int64_t(x.size()));
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      ref[i] = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    }
    QVERIFY(max_rel_err(out, ref) < 1e-6);
  }

  void fast_exp_accuracy() {
    double worst = 0;
    for (double x = -87.0; x <= 88.0; x += 0.001) {
      const double want = std::exp(double(float(x)));
      worst = std::max(worst, std::abs(engine::fast_expf(float(x)) - want) / want);
    }
    QVERIFY2(worst < 3e-7, qPrintable(QString::number(worst)));
    QVERIFY(engine::fast_expf(-1000.0f) >= 0.0f && engine::fast_expf(-1000.0f) < 1e-37f);
    QVERIFY(std::isfinite(engine::fast_expf(1000.0f)));
    // GELU saturates cleanly at both ends.
    QCOMPARE(engine::gelu_tanh(-50.0f), -0.0f);
    QCOMPARE(engine::gelu_tanh(50.0f), 50.0f);
  }

  void encoder_and_residual() {
    const int V = 11, C = 9, maxT = 8, T = 3, pos0 = 4;
    const auto wte = random_vec(size_t(V) * C, 8), wpe = random_vec(size_t(maxT) * C, 9);
    const int32_t tokens[T] = {3, 0, 10};
    std::vector<float> out(size_t(T) * C);
    m_be->encoder_forward(out.data(), tokens, wte.data(), wpe.data(), pos0, T, C);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < C; ++i)
        QCOMPARE(out[size_t(t) * C + i], wte[size_t(tokens[t]) * C + i] + wpe[size_t(pos0 + t) * C + i]);
    std::vector<float> sum(out.size());
    m_be->residual_forward(sum.data(), out.data(), out.data(), int64_t(out.size()));
    for (size_t i = 0; i < out.size(); ++i) QCOMPARE(sum[i], 2 * out[i]);
  }

  void attention_data() {
    QTest::addColumn<int>("P");
    QTest::addColumn<int>("T");
    QTest::addColumn<int>("NH");
    QTest::addColumn<int>("KVH");
    QTest::addColumn<int>("HS");
    QTest::newRow("prefill 1 head") << 0 << 5 << 1 << 1 << 8;
    QTest::newRow("prefill 4 heads") << 0 << 9 << 4 << 4 << 16;
    QTest::newRow("decode after 7 cached") << 7 << 1 << 4 << 4 << 16;
    QTest::newRow("chunk after 3 cached") << 3 << 4 << 2 << 2 << 12;
    QTest::newRow("grouped query 8q/2kv") << 2 << 5 << 8 << 2 << 8;
  }
  void attention() {
    QFETCH(int, P);
    QFETCH(int, T);
    QFETCH(int, NH);
    QFETCH(int, KVH);
    QFETCH(int, HS);
    const int total = P + T, q_stride = NH * HS + 5;  // padding checks the stride is honoured
    const auto q = random_vec(size_t(T) * q_stride, 10), k = random_vec(size_t(total) * KVH * HS, 11),
               v = random_vec(size_t(total) * KVH * HS, 12);
    std::vector<float> out(size_t(T) * NH * HS), probs(size_t(NH) * T * total, -1.0f);
    m_be->attention_forward(out.data(), q.data(), q_stride, k.data(), v.data(), P, T, NH, KVH, HS, probs.data());
    std::vector<double> ref(out.size());
    const int group = NH / KVH;
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t) {
        const int kvh = h / group, n = P + t + 1;
        std::vector<double> s(n);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < n; ++j) {
          double d = 0;
          for (int i = 0; i < HS; ++i)
            d += double(q[size_t(t) * q_stride + h * HS + i]) * k[(size_t(j) * KVH + kvh) * HS + i];
          s[j] = d / std::sqrt(double(HS));
          mx = std::max(mx, s[j]);
        }
        for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - mx));
        double row_sum = 0;
        for (int j = 0; j < total; ++j) {
          const float p = probs[(size_t(h) * T + t) * total + j];
          if (j >= n) {
            QCOMPARE(p, 0.0f);  // causal: nothing above the diagonal
          } else {
            QVERIFY(std::abs(p - s[j] / sum) < 1e-6);
          }
          row_sum += p;
        }
        QVERIFY(std::abs(row_sum - 1.0) < 1e-5);
        for (int i = 0; i < HS; ++i) {
          double o = 0;
          for (int j = 0; j < n; ++j) o += s[j] / sum * v[(size_t(j) * KVH + kvh) * HS + i];
          ref[size_t(t) * NH * HS + h * HS + i] = o;
        }
      }
    QVERIFY2(max_rel_err(out, ref) < 1e-5, qPrintable(QString::number(max_rel_err(out, ref))));
  }

  void copy_rows() {
    const auto src = random_vec(4 * 10, 13);
    std::vector<float> dst(4 * 6, 0.f);
    m_be->copy_rows(dst.data(), 6, src.data() + 2, 10, 4, 6);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 6; ++c) QCOMPARE(dst[r * 6 + c], src[r * 10 + 2 + c]);
  }

  void backend_choice_reports_reason() {
    const engine::BackendChoice c = engine::choose_backend(engine::BackendPreference::Auto, 1);
    QVERIFY(c.backend);
    QCOMPARE(QString::fromStdString(c.backend->name()), QStringLiteral("CPU"));
    QVERIFY(QString::fromStdString(c.reason).startsWith("CPU: "));
  }
};

QTEST_APPLESS_MAIN(TestBackendOps)
#include "test_backend_ops.moc"
