// The CPU kernels for instruction sets other than the build machine's, built without -march=native.
//
// The engine is compiled for the machine it builds on, so its own tests only run that machine's
// paths: the AVX-512 kernels on an AVX-512 machine, the 256-bit ones on an AVX2-only one. This file
// compiles the packed-layout kernels and the file-layout kernels they must agree with from the same
// sources twice (tests/CMakeLists.txt): test_portable_kernels for plain x86-64 (no AVX2 / FMA /
// F16C: the C paths) and test_avx2_kernels for Haswell (AVX2, FMA, F16C, without AVX-512 or VNNI),
// so every path is checked on every machine that can run it. Same checks as test_matmul_typed's
// x8_sums_equal_the_file_layout, plus the f16 panels against the row-layout matvec and the f32
// prefill GEMM against a double-precision product.
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/cpu_gemm_f32.h"
#include "engine/dtype.h"
#include "engine/quant.h"
#include "engine/thread_pool.h"
#include "support/random_quant.h"

using namespace engine;

class TestPortableKernels : public QObject {
  Q_OBJECT

  // x8 sums (the portable loops, or the 256-bit tiles in test_avx2_kernels) for N tokens against
  // the file-layout matvec of each token: the same integer sums, so they agree to float rounding.
  static void check_x8_against_file_layout(DType t, const std::vector<uint8_t>& q, const std::vector<float>& X, int N,
                                           int C, int OC) {
    std::vector<uint8_t> p(x8_bytes(t, OC, C));
    pack_x8(t, q.data(), OC, C, p.data());
    q8_act rows, one;
    quantize_act_q8_rows(X.data(), N, C, rows);
    std::vector<float> got(size_t(N) * OC, NAN), want(OC);
    matmul_x8(t, got.data(), p.data(), rows, N, OC, 0, OC / 8);
    const auto matvec = t == DType::Q8_0   ? matvec_q8_0_act
                        : t == DType::Q4_0 ? matvec_q4_0_act
                        : t == DType::Q4_K ? matvec_q4_K_act
                        : t == DType::Q6_K ? matvec_q6_K_act
                        : t == DType::Q4_1 ? matvec_q4_1_act
                        : t == DType::Q5_0 ? matvec_q5_0_act
                        : t == DType::Q5_1 ? matvec_q5_1_act
                                           : matvec_q5_K_act;
    for (int n = 0; n < N; ++n) {
      quantize_act_q8(X.data() + size_t(n) * C, C, one);
      matvec(want.data(), q.data(), one, 0, OC);
      for (int o = 0; o < OC / 8 * 8; ++o)
        QVERIFY2(std::abs(got[size_t(n) * OC + o] - want[o]) <= 1e-5f * (1.f + std::abs(want[o])),
                 qPrintable(QString("%1 N=%2 n=%3 o=%4").arg(dtype_name(t).data()).arg(N).arg(n).arg(o)));
    }
  }

 private slots:
  void built_for_the_intended_instruction_set() {
#if defined(WB_EXPECT_AVX2)
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__) || defined(__AVX512F__) || defined(__AVXVNNI__)
    QFAIL("test_avx2_kernels must be compiled for AVX2 + FMA + F16C without AVX-512 or VNNI");
#endif
#elif defined(__AVX2__) || defined(__F16C__)
    QFAIL("test_portable_kernels must be compiled without AVX2 / F16C to exercise the portable kernels");
#endif
  }

  void init() {
#if defined(WB_EXPECT_AVX2)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c"))
      QSKIP("this CPU has no AVX2 / FMA / F16C");
#endif
  }

  void packed_equals_file_layout() {
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.f, 0.1f);
    // A 4-token tile plus 3 (x8), a 6-token tile plus 1 (f16); OC % 8 and OC % 16 leave tails.
    const int N = 7, C = 96, OC = 37;
    std::vector<float> W(size_t(OC) * C), X(size_t(N) * C);
    for (auto& v : W) v = nd(rng);
    for (auto& v : X) v = nd(rng);
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
      std::vector<uint8_t> q(dtype_bytes(t, uint64_t(OC) * C));
      (t == DType::Q8_0 ? quantize_row_q8_0 : quantize_row_q4_0)(W.data(), q.data(), int64_t(OC) * C);
      check_x8_against_file_layout(t, q, X, N, C, OC);
    }
    // q4_1 / q5_0 / q5_1 (random valid blocks): one token and a tile plus 3.
    for (DType t : {DType::Q4_1, DType::Q5_0, DType::Q5_1})
      for (int N32 : {1, 7}) check_x8_against_file_layout(t, random_weights(t, OC, C, 9), X, N32, C, OC);
    // q4_K / q6_K / q5_K (two super-blocks per row); one token takes q6_K's decode functions, 7 its prefill ones.
    const int CK = 512;
    for (DType t : {DType::Q4_K, DType::Q6_K, DType::Q5_K})
      for (int NK : {1, 7}) {
        std::vector<float> XK(size_t(NK) * CK);
        for (auto& v : XK) v = nd(rng);
        check_x8_against_file_layout(t, random_weights(t, OC, CK, 7), XK, NK, CK, OC);
      }
    std::vector<uint16_t> h(size_t(OC) * C);
    for (size_t i = 0; i < h.size(); ++i) h[i] = f32_to_fp16(W[i]);
    std::vector<uint16_t> panels(f16_panel_bytes(OC, C) / 2);
    pack_f16_panels(h.data(), OC, C, panels.data());
    std::vector<float> got(size_t(N) * OC, NAN), want(OC);
    matmul_f16_panels(got.data(), panels.data(), X.data(), N, C, OC, 0, OC / 16);
    for (int n = 0; n < N; ++n) {
      matvec_f16(want.data(), h.data(), X.data() + size_t(n) * C, C, 0, OC);
      for (int o = 0; o < OC / 16 * 16; ++o) QVERIFY(std::abs(got[size_t(n) * OC + o] - want[o]) <= 1e-5f);
    }
  }
  // The f32 prefill GEMM's 256-bit tiles (test_avx2_kernels) against a double-precision product,
  // over shapes that leave every remainder: N past a 16-token panel and past a 256-token block, C
  // past a column chunk and C = 1, OC short of a 6-row tile and of a 16-row block. The portable build
  // has no tiles and must say so (the backend then uses sgemm).
  void f32_panel_gemm_matches_double_reference() {
#if defined(WB_EXPECT_AVX2)
    QVERIFY(gemm_f32_panels_available());
    ThreadPool pool(3);
    std::vector<float> panels;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> ud(-1.f, 1.f);
    struct Shape {
      int N, C, OC;
    };
    for (const Shape s : {Shape{16, 16, 16}, Shape{17, 600, 50}, Shape{33, 1, 13}, Shape{300, 40, 100}, Shape {
                            40,
                            1100,
                            7
                          }}) {
      std::vector<float> X(size_t(s.N) * s.C), W(size_t(s.OC) * s.C), b(s.OC), got(size_t(s.N) * s.OC, NAN);
      for (auto* v : {&X, &W, &b})
        for (float& e : *v) e = ud(rng);
      gemm_f32_panels(pool, panels, got.data(), X.data(), W.data(), b.data(), s.N, s.C, s.OC);
      for (int n = 0; n < s.N; ++n)
        for (int o = 0; o < s.OC; ++o) {
          double want = b[o], magnitude = std::abs(b[o]);
          for (int k = 0; k < s.C; ++k) {
            const double p = double(X[size_t(n) * s.C + k]) * W[size_t(o) * s.C + k];
            want += p;
            magnitude += std::abs(p);
          }
          QVERIFY2(std::abs(got[size_t(n) * s.OC + o] - want) <= 1e-6 * std::sqrt(double(s.C)) * magnitude,
                   qPrintable(QString("N=%1 C=%2 OC=%3 n=%4 o=%5").arg(s.N).arg(s.C).arg(s.OC).arg(n).arg(o)));
        }
    }
#else
    QVERIFY(!gemm_f32_panels_available());
#endif
  }
};

QTEST_APPLESS_MAIN(TestPortableKernels)
#include "test_portable_kernels.moc"
