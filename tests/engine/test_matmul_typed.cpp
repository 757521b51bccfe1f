// Backend::matmul_forward_typed / encoder_forward_typed over every weight encoding (f32, f16, bf16,
// q8_0, q4_0, q4_K, q6_K, q4_1, q5_0, q5_1, q5_K), on the CPU backend's kernels and on Backend's default (widen then
// matmul_forward), against a double-precision product of the exactly dequantized weights.
//
// N > 1 (prefill) and f16 multiply the dequantized weights in f32, so they must match the reference
// to f32 rounding. N == 1 on block types rounds x to int8 per 32 values (|error| <= amax/254 per
// element), so there the test bounds each output by sum_c |w_c| * amax(block of c)/254: a bound the
// kernel's arithmetic guarantees, not a tolerance fitted to its output. Odd OC and 1..3 threads
// exercise uneven row splits; f32 weights must give matmul_forward's result bit for bit.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/backend.h"
#include "engine/quant.h"
#include "support/error_of.h"
#include "support/op_reference.h"
#include "support/random_quant.h"

using engine::Backend;
using engine::DType;
using engine::WeightRef;

namespace {

// Every op forwards to the CPU backend except the *_typed ones, so Backend's defaults run.
class DefaultTypedBackend final : public Backend {
 public:
  std::string name() const override { return "default-typed"; }
  std::string description() const override { return "test"; }
  void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int pos0, int T,
                       int C) override {
    m_cpu->encoder_forward(out, tokens, wte, wpe, pos0, T, C);
  }
  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                         int N, int C, float eps) override {
    m_cpu->layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps);
  }
  void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                       float eps) override {
    m_cpu->rmsnorm_forward(out, rstd, inp, weight, N, C, eps);
  }
  void rope_forward(float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS, int pos0,
                    float theta, bool interleaved) override {
    m_cpu->rope_forward(q, q_stride, NH, k, k_stride, KVH, T, HS, pos0, theta, interleaved);
  }
  void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) override {
    m_cpu->swiglu_forward(out, gate, up, n);
  }
  void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C,
                      int OC) override {
    m_cpu->matmul_forward(out, inp, weight, bias, N, C, OC);
  }
  void attention_forward(float* out, const float* q, int q_stride, const float* k_cache, const float* v_cache, int P,
                         int T, int NH, int KVH, int HS, float* att_probs) override {
    m_cpu->attention_forward(out, q, q_stride, k_cache, v_cache, P, T, NH, KVH, HS, att_probs);
  }
  void gelu_forward(float* out, const float* inp, int64_t n) override { m_cpu->gelu_forward(out, inp, n); }
  void residual_forward(float* out, const float* a, const float* b, int64_t n) override {
    m_cpu->residual_forward(out, a, b, n);
  }
  void copy_rows(float* dst, int dst_stride, const float* src, int src_stride, int rows, int cols) override {
    m_cpu->copy_rows(dst, dst_stride, src, src_stride, rows, cols);
  }

 private:
  std::unique_ptr<Backend> m_cpu = engine::make_cpu_backend(2);
};

DType dtype_of(const QString& s) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::Q4_1,
                  DType::Q5_0, DType::Q5_1, DType::Q5_K})
    if (s == QString::fromLatin1(engine::dtype_name(t).data(), int(engine::dtype_name(t).size()))) return t;
  qFatal("unknown dtype");
}

// The file-layout int8 matvec of a block type, the reference every x8 kernel must agree with.
using ActMatvec = void (*)(float*, const void*, const engine::q8_act&, int64_t, int64_t);
ActMatvec file_layout_matvec(DType t) {
  switch (t) {
    case DType::Q8_0: return engine::matvec_q8_0_act;
    case DType::Q4_0: return engine::matvec_q4_0_act;
    case DType::Q4_K: return engine::matvec_q4_K_act;
    case DType::Q6_K: return engine::matvec_q6_K_act;
    case DType::Q4_1: return engine::matvec_q4_1_act;
    case DType::Q5_0: return engine::matvec_q5_0_act;
    case DType::Q5_1: return engine::matvec_q5_1_act;
    case DType::Q5_K: return engine::matvec_q5_K_act;
    default: qFatal("no int8 matvec");
  }
}

}  // namespace

class TestMatmulTyped : public QObject {
  Q_OBJECT

 private slots:
  void matches_reference_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    QTest::addColumn<int>("threads");  // 0: Backend's default implementation
    QTest::addColumn<bool>("x8");      // the weight also has its packed copy (x8 or f16 panels), as GGUF loads give
    for (const char* t : {"f16", "bf16", "q8_0", "q4_0", "q4_K", "q6_K", "q4_1", "q5_0", "q5_1", "q5_K"}) {
      const bool k = t[3] == 'K';
      const int C = k ? 512 : 96;
      for (int N : {1, 5})
        for (int threads : {0, 1, 3}) {
          const int OC = threads == 3 ? 301 : 37;  // odd, and not a multiple of the 16-row split unit
          QTest::addRow("%s N=%d C=%d OC=%d threads=%d", t, N, C, OC, threads) << t << N << C << OC << threads << false;
        }
      // C = 4096: 64-row widening tiles, so a thread's rows span several tiles with a partial last one.
      QTest::addRow("%s N=5 C=4096 OC=301 threads=2", t) << t << 5 << 4096 << 301 << 2 << false;
    }
    // Packed copies. x8 (q8_0 / q4_0): N = 1 (decode), 4 (one 4-token tile), 9 (two tiles and a
    // single token; with AVX-512, q4_0's one 8-token tile and one), 19 (AVX-512 q8_0: four 4-token
    // tiles and three singles; q4_0: two 8-token tiles and three); OC % 8 = 5 tail rows from the
    // file layout; 16-row units split unevenly over 3 threads, 37 groups leave one unpaired group
    // for the AVX-512 kernels. f16 panels: N = 1, 6 (one 6-token tile), 13 (two tiles and one
    // token; AVX-512: one 12-token tile and one), 5 (a short tile only), 26 (AVX-512: two 12-token
    // tiles and two); OC % 16 = 5 or 13 tail rows, 18 panels in thread ranges of odd lengths;
    // C = 4100 takes several column chunks and a C % 4 (and C % 8) tail.
    for (const char* t : {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1"})
      for (int N : {1, 4, 9, 19})
        for (int threads : {1, 3}) {
          const int OC = threads == 3 ? 301 : 37;
          QTest::addRow("%s x8 N=%d C=96 OC=%d threads=%d", t, N, OC, threads) << t << N << 96 << OC << threads << true;
        }
    // q4_K x8 (two super-blocks per row): N = 1, 8 (one 8-token tile), 11 (a tile and 3 singles);
    // 37 groups over 3 threads leave a group with no partner (the kernel's `single` store).
    for (int N : {1, 8, 11})
      for (int threads : {1, 3}) {
        const int OC = threads == 3 ? 301 : 37;
        QTest::addRow("q4_K x8 N=%d C=512 OC=%d threads=%d", N, OC, threads)
            << "q4_K" << N << 512 << OC << threads << true;
        QTest::addRow("q5_K x8 N=%d C=512 OC=%d threads=%d", N, OC, threads)
            << "q5_K" << N << 512 << OC << threads << true;
      }
    // q6_K x8: N = 1 (the decode functions), 2 (two single-token tiles over the unpacked weights), 4
    // (one 4-token tile), 15 (AVX-512: an 8-token, a 4-token tile and 3 singles; 256 bits: three
    // 4-token tiles and 3 singles), the same row splits.
    for (int N : {1, 2, 4, 15})
      for (int threads : {1, 3}) {
        const int OC = threads == 3 ? 301 : 37;
        QTest::addRow("q6_K x8 N=%d C=512 OC=%d threads=%d", N, OC, threads)
            << "q6_K" << N << 512 << OC << threads << true;
      }
    for (int N : {1, 5, 6, 13, 26})
      for (int threads : {1, 3}) {
        const int OC = threads == 3 ? 301 : 45;
        QTest::addRow("f16 panels N=%d C=100 OC=%d threads=%d", N, OC, threads)
            << "f16" << N << 100 << OC << threads << true;
      }
    QTest::addRow("f16 panels N=7 C=4100 OC=40 threads=2") << "f16" << 7 << 4100 << 40 << 2 << true;
  }
  void matches_reference() {
    QFETCH(QString, dtype);
    QFETCH(int, N);
    QFETCH(int, C);
    QFETCH(int, OC);
    QFETCH(int, threads);
    QFETCH(bool, x8);
    const DType t = dtype_of(dtype);
    const auto bytes = random_weights(t, OC, C, 11);
    const auto w = widened(t, bytes, OC, C);
    const auto x = random_vec(size_t(N) * C, 12);
    const auto bias = random_vec(size_t(OC), 13);
    std::unique_ptr<Backend> be = threads ? engine::make_cpu_backend(threads) : std::make_unique<DefaultTypedBackend>();
    std::vector<float> out(size_t(N) * OC, NAN);
    WeightRef ref{t, bytes.data()};
    std::vector<uint8_t> packed;
    if (x8 && t == DType::F16) {
      packed.resize(engine::f16_panel_bytes(OC, C));
      engine::pack_f16_panels(reinterpret_cast<const uint16_t*>(bytes.data()), OC, C,
                              reinterpret_cast<uint16_t*>(packed.data()));
      ref.packed = packed.data();
    } else if (x8) {
      packed.resize(engine::x8_bytes(t, OC, C));
      engine::pack_x8(t, bytes.data(), OC, C, packed.data());
      ref.packed = packed.data();
    }
    be->matmul_forward_typed(out.data(), x.data(), ref, bias.data(), N, C, OC);

    // Only the CPU kernels round activations: for single rows of block types, and for every row
    // of weights with an x8 copy.
    const bool rounded = threads > 0 && (N == 1 || x8) && engine::dtype_is_quantized(t);
    double worst = 0;  // largest |out - ref| / allowed
    for (int n = 0; n < N; ++n) {
      const float* xn = x.data() + size_t(n) * C;
      for (int o = 0; o < OC; ++o) {
        const float* wo = w.data() + size_t(o) * C;
        double ref = bias[o], mag = std::abs(bias[o]), act_bound = 0;
        for (int c = 0; c < C; ++c) {
          ref += double(wo[c]) * xn[c];
          mag += std::abs(double(wo[c]) * xn[c]);
        }
        if (rounded)
          for (int b = 0; b < C / 32; ++b) {
            double amax = 0, wsum = 0;
            for (int j = 0; j < 32; ++j) {
              amax = std::max(amax, double(std::abs(xn[b * 32 + j])));
              wsum += std::abs(double(wo[b * 32 + j]));
            }
            act_bound += wsum * amax / 254.0;
          }
        // f32 accumulation: a few ulps of the magnitude sum; plus the activation rounding bound.
        const double allowed = 1e-5 * mag + 1.001 * act_bound + 1e-6;
        const double got = out[size_t(n) * OC + o];
        QVERIFY2(std::isfinite(got), qPrintable(QString("out[%1,%2] not finite").arg(n).arg(o)));
        worst = std::max(worst, std::abs(got - ref) / allowed);
      }
    }
    QVERIFY2(worst <= 1.0, qPrintable(QString("error %1 x the allowed bound").arg(worst)));
    if (rounded) {
      // The bound must not be so loose that it hides a wrong kernel: a bias-only output violates it.
      double ref0 = bias[0];
      for (int c = 0; c < C; ++c) ref0 += double(w[c]) * x[c];
      QVERIFY(std::abs(ref0 - out[0]) < 0.5 * std::abs(ref0 - bias[0]));
    }
  }

  void x8_sums_equal_the_file_layout() {
    // Same int8 activations, same integer block sums: the x8 product of every token must equal the
    // file-layout matvec's up to f32 summation order (a few ulps of the magnitude).
    for (DType t :
         {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q5_K}) {
      const int N = 6, C = engine::dtype_block_elems(t) == 256 ? 512 : 256, OC = 40;
      const auto bytes = random_weights(t, OC, C, 31);
      std::vector<uint8_t> packed(engine::x8_bytes(t, OC, C));
      engine::pack_x8(t, bytes.data(), OC, C, packed.data());
      const auto x = random_vec(size_t(N) * C, 32);
      engine::q8_act rows, one;
      engine::quantize_act_q8_rows(x.data(), N, C, rows);
      std::vector<float> got(size_t(N) * OC, NAN), want(OC);
      engine::matmul_x8(t, got.data(), packed.data(), rows, N, OC, 0, OC / 8);
      // The shared unsigned copy (what the backend builds once per q6_K product) must give exactly
      // the per-call copy's result, and re-quantizing must drop it rather than leave it stale.
      engine::prepare_act_x8(t, rows);
      std::vector<float> shared(got.size(), NAN);
      engine::matmul_x8(t, shared.data(), packed.data(), rows, N, OC, 0, OC / 8);
      QVERIFY(std::memcmp(shared.data(), got.data(), got.size() * sizeof(float)) == 0);
      engine::quantize_act_q8_rows(x.data(), N, C, rows);
      QVERIFY(rows.qu.empty() && rows.half_sums.empty());
      for (int n = 0; n < N; ++n) {
        engine::quantize_act_q8(x.data() + size_t(n) * C, C, one);
        file_layout_matvec(t)(want.data(), bytes.data(), one, 0, OC);
        for (int o = 0; o < OC; ++o) {
          const float g = got[size_t(n) * OC + o];
          QVERIFY2(std::abs(g - want[o]) <= 1e-5f * (1.f + std::abs(want[o])),
                   qPrintable(QString("%1 n=%2 o=%3: %4 vs %5")
                                  .arg(engine::dtype_name(t).data())
                                  .arg(n)
                                  .arg(o)
                                  .arg(g)
                                  .arg(want[o])));
        }
      }
    }
    // Wrong inputs are errors, not out-of-bounds reads.
    QVERIFY(error_of([] { (void)engine::x8_bytes(DType::BF16, 8, 256); }).contains("bf16"));
    QVERIFY(error_of([] { (void)engine::x8_bytes(DType::Q6_K, 8, 96); }).contains("multiple of 256"));
    QVERIFY(error_of([] { (void)engine::x8_bytes(DType::Q8_0, 8, 100); }).contains("multiple of 32"));
    engine::q8_act a;
    std::vector<float> x(64, 1.f), out(64);
    engine::quantize_act_q8_rows(x.data(), 1, 64, a);
    std::vector<uint8_t> p(engine::x8_bytes(DType::Q8_0, 16, 64));
    QVERIFY(error_of([&] { engine::matmul_x8(DType::Q8_0, out.data(), p.data(), a, 1, 16, 0, 3); }).contains("range"));
    QVERIFY(
        error_of([&] { engine::matmul_x8(DType::Q8_0, out.data(), p.data(), a, 2, 16, 0, 2); }).contains("activation"));
  }

  // The decode (one-token) x8 kernels against the file-layout matvec on the same int8 activations:
  // q4_0 with one block (no pair), an odd block count (pairs and a last single) and a wide row;
  // q4_K and q6_K with one and eight super-blocks. Then the largest int16 partial sums the kernels
  // can meet: every weight value at its top (nibble 15, q6_K 63) against activations of +-127 (and a
  // mix of both signs), which must not wrap. matmul_x8 prepares q6_K's activations itself here.
  void x8_decode_matches_file_layout() {
    struct Case {
      DType t;
      int C;
    };
    for (const Case& c :
         {Case{DType::Q4_0, 32}, Case{DType::Q4_0, 288}, Case{DType::Q4_0, 2048}, Case{DType::Q4_K, 256},
          Case{DType::Q4_K, 2048}, Case{DType::Q6_K, 256}, Case{DType::Q6_K, 2048}, Case{DType::Q4_1, 288},
          Case{DType::Q5_0, 32}, Case{DType::Q5_0, 2048}, Case{DType::Q5_1, 288}, Case{DType::Q5_K, 256},
          Case{DType::Q5_K, 2048}})
      for (int extreme = 0; extreme < 3; ++extreme) {
        const int OC = 24;
        auto bytes = random_weights(c.t, OC, c.C, 41);
        std::vector<float> x = random_vec(size_t(c.C), 42);
        if (extreme) {
          // Every value at its largest: nibbles 15 (q4_0: after d; q4_K: after d, dmin and the
          // scales), q6_K's 6-bit values 63 (ql and qh, before its scales and d).
          // q4_1 / q5_1: after d and m; q5_0: after d (fifth bits and nibbles); q5_K: after d, dmin and the
          // scales (fifth bits and nibbles): every value 31.
          const size_t block = engine::dtype_bytes(c.t, engine::dtype_block_elems(c.t));
          const size_t first = c.t == DType::Q4_0 || c.t == DType::Q5_0                       ? 2
                               : c.t == DType::Q4_1 || c.t == DType::Q5_1                     ? 4
                               : c.t == DType::Q4_K || c.t == DType::Q5_K                     ? 16
                                                                                              : 0;
          const size_t last = c.t == DType::Q6_K ? 192 : block;
          for (size_t b = 0; b < bytes.size() / block; ++b)
            std::memset(bytes.data() + b * block + first, 0xff, last - first);
          for (size_t i = 0; i < x.size(); ++i) x[i] = extreme == 1 || i % 3 == 0 ? 1.f : -1.f;
        }
        std::vector<uint8_t> packed(engine::x8_bytes(c.t, OC, c.C));
        engine::pack_x8(c.t, bytes.data(), OC, c.C, packed.data());
        engine::q8_act act;
        engine::quantize_act_q8(x.data(), c.C, act);
        std::vector<float> got(OC, NAN), want(OC);
        engine::matmul_x8(c.t, got.data(), packed.data(), act, 1, OC, 0, OC / 8);
        file_layout_matvec(c.t)(want.data(), bytes.data(), act, 0, OC);
        double mag = 0;
        for (float v : want) mag = std::max(mag, double(std::abs(v)));
        for (int o = 0; o < OC; ++o)
          QVERIFY2(std::abs(got[o] - want[o]) <= 1e-5 * (1 + mag), qPrintable(QString("%1 C=%2 case %3 o=%4: %5 vs %6")
                                                                                  .arg(engine::dtype_name(c.t).data())
                                                                                  .arg(c.C)
                                                                                  .arg(extreme)
                                                                                  .arg(o)
                                                                                  .arg(got[o])
                                                                                  .arg(want[o])));
      }
  }

  void f32_is_exactly_matmul_forward() {
    for (int N : {1, 5}) {
      const int C = 70, OC = 33;
      const auto w = random_vec(size_t(OC) * C, 1), x = random_vec(size_t(N) * C, 2), b = random_vec(OC, 3);
      for (int threads : {0, 2}) {
        std::unique_ptr<Backend> be =
            threads ? engine::make_cpu_backend(threads) : std::make_unique<DefaultTypedBackend>();
        std::vector<float> a(size_t(N) * OC), c(a.size());
        be->matmul_forward(a.data(), x.data(), w.data(), b.data(), N, C, OC);
        be->matmul_forward_typed(c.data(), x.data(), WeightRef{DType::F32, w.data()}, b.data(), N, C, OC);
        QVERIFY(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) == 0);
      }
    }
  }

  void encoder_widens_only_the_rows_asked_for() {
    for (const char* name : {"f32", "f16", "q8_0", "q4_0", "q6_K"}) {
      const DType t = dtype_of(name);
      const int V = 9, C = 256, T = 3, P = 2;
      const auto bytes = random_weights(t, V, C, 21);
      const auto w = widened(t, bytes, V, C);
      const auto wpe = random_vec(size_t(P + T) * C, 22);
      const int32_t tokens[T] = {8, 0, 8};
      for (int threads : {0, 2}) {
        std::unique_ptr<Backend> be =
            threads ? engine::make_cpu_backend(threads) : std::make_unique<DefaultTypedBackend>();
        std::vector<float> out(size_t(T) * C, NAN);
        be->encoder_forward_typed(out.data(), tokens, WeightRef{t, bytes.data()}, wpe.data(), P, T, C);
        for (int i = 0; i < T; ++i)
          for (int c = 0; c < C; ++c)
            QCOMPARE(out[size_t(i) * C + c], w[size_t(tokens[i]) * C + c] + wpe[size_t(P + i) * C + c]);
        // Rotary models pass no position table.
        be->encoder_forward_typed(out.data(), tokens, WeightRef{t, bytes.data()}, nullptr, P, T, C);
        QCOMPARE(out[size_t(2) * C + 5], w[size_t(8) * C + 5]);
      }
    }
  }

  void partial_blocks_are_errors() {
    auto be = engine::make_cpu_backend(2);
    const auto bytes = random_weights(DType::Q4_K, 4, 512, 1);
    std::vector<float> x(96, 1.f), out(4);
    // A q4_K row must be whole 256-weight blocks; C = 96 is not, for the matvec and the tiled path.
    for (int N : {1, 2}) {
      std::vector<float> xs(size_t(N) * 96, 1.f), o(size_t(N) * 4);
      const QString err = error_of([&] {
        be->matmul_forward_typed(o.data(), xs.data(), WeightRef{DType::Q4_K, bytes.data()}, nullptr, N, 96, 4);
      });
      QVERIFY2(err.contains("multiple of 256"), qPrintable(err));
    }
    QVERIFY(error_of([&] {
              be->matmul_forward_typed(out.data(), x.data(), WeightRef{DType::Q8_0, nullptr}, nullptr, 1, 96, 4);
            }).contains("no data"));
  }
};

QTEST_APPLESS_MAIN(TestMatmulTyped)
#include "test_matmul_typed.moc"
