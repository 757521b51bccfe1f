// The CPU kernels' portable paths (no AVX2 / FMA / F16C), built without -march=native.
//
// Every build machine here has AVX2, so the engine's own tests only ever run the SIMD paths; this
// executable compiles the packed-layout kernels and the file-layout kernels they must agree with
// from the same sources for plain x86-64 (or whatever the compiler's default target is), so a
// machine without AVX2 still gets correct products. Same checks as test_matmul_typed's
// x8_sums_equal_the_file_layout, plus the f16 panels against the row-layout matvec.
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "engine/dtype.h"
#include "engine/quant.h"

using namespace engine;

class TestPortableKernels : public QObject {
  Q_OBJECT

 private slots:
  void built_without_simd() {
#if defined(__AVX2__) || defined(__F16C__)
    QFAIL("this test must be compiled without AVX2 / F16C to exercise the portable kernels");
#endif
  }

  void packed_equals_file_layout() {
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.f, 0.1f);
    const int N = 7, C = 96, OC = 37;  // a 4-token tile plus 3; OC % 8 and OC % 16 leave tails
    std::vector<float> W(size_t(OC) * C), X(size_t(N) * C);
    for (auto& v : W) v = nd(rng);
    for (auto& v : X) v = nd(rng);
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
      std::vector<uint8_t> q(dtype_bytes(t, uint64_t(OC) * C));
      (t == DType::Q8_0 ? quantize_row_q8_0 : quantize_row_q4_0)(W.data(), q.data(), int64_t(OC) * C);
      std::vector<uint8_t> p(x8_bytes(t, OC, C));
      pack_x8(t, q.data(), OC, C, p.data());
      q8_act rows, one;
      quantize_act_q8_rows(X.data(), N, C, rows);
      std::vector<float> got(size_t(N) * OC, NAN), want(OC);
      matmul_x8(t, got.data(), p.data(), rows, N, OC, 0, OC / 8);
      for (int n = 0; n < N; ++n) {
        quantize_act_q8(X.data() + size_t(n) * C, C, one);
        (t == DType::Q8_0 ? matvec_q8_0_act : matvec_q4_0_act)(want.data(), q.data(), one, 0, OC);
        for (int o = 0; o < OC / 8 * 8; ++o) QVERIFY(std::abs(got[size_t(n) * OC + o] - want[o]) <= 1e-5f);
      }
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
};

QTEST_APPLESS_MAIN(TestPortableKernels)
#include "test_portable_kernels.moc"
