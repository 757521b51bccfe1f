// Quantized formats and kernels (engine/quant.h):
//  - hand-computed blocks pin the q8_0 / q4_0 layouts and rounding (0..31, zeros, an outlier, a
//    negative max), so a silent layout change cannot pass;
//  - quantize -> dequantize stays within the rounding bound of each format; our q4_1 / q5_0 / q5_1 /
//    q5_K quantizers put every value on the nearest point of a grid that covers its block, checked in
//    double precision from the block bytes;
//  - gguf-py fixtures (tests/tools/make_quant_fixture.py) are an independent reference: our
//    quantizers must match it byte for byte, our q4_K / q6_K / q4_1 / q5_0 / q5_1 / q5_K dequantizers
//    value for value, and gguf-py reads the GGUF our q4_1 / q5 quantizers write as our dequantizers do
//    (tests/tools/make_quant_writer_fixture.py);
//  - every matvec / matmul kernel (q8_0, q4_0, q4_K, q6_K, f16) agrees with a double-precision product of the
//  dequantized
//    weights, over shapes with C a multiple of 32 but not of 256, odd OC and partial row ranges.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <utility>
#include <vector>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/quant.h"

namespace {

using engine::k_q4_0_bytes;
using engine::k_q8_0_bytes;

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

uint16_t block_d(const uint8_t* block) {
  uint16_t d;
  std::memcpy(&d, block, 2);
  return d;
}

QByteArray read_fixture(const char* name) {
  QFile f(QStringLiteral(WB_TEST_DATA_DIR "/quant/") + QString::fromLatin1(name));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

std::vector<float> as_floats(const QByteArray& b) {
  std::vector<float> v((size_t)b.size() / 4);
  std::memcpy(v.data(), b.constData(), v.size() * 4);
  return v;
}

// Double-precision out[o] = dot(Wf[o], x) and the scale sum|w||x| that bounds float rounding.
void reference_matvec(const std::vector<float>& Wf, const std::vector<float>& x, int C, int OC,
                      std::vector<double>& ref, std::vector<double>& mag) {
  ref.assign((size_t)OC, 0.0);
  mag.assign((size_t)OC, 0.0);
  for (int o = 0; o < OC; ++o)
    for (int i = 0; i < C; ++i) {
      ref[o] += (double)Wf[(size_t)o * C + i] * x[i];
      mag[o] += std::fabs((double)Wf[(size_t)o * C + i] * x[i]);
    }
}

enum class Kind { q8_0, q4_0 };

}  // namespace

class TestQuant : public QObject {
  Q_OBJECT
 private slots:
  void activation_quantization_is_round_to_nearest() {
    // The SIMD block loop must give exactly the portable definition: d = amax / 127, q =
    // nearbyint(x * (1/d)) (ties to even), sum = sum(q); an all-zero block has d = 0 and q = 0.
    std::mt19937 rng(9);
    std::normal_distribution<float> nd(0.f, 2.f);
    std::vector<float> x(32 * 6);
    for (auto& v : x) v = nd(rng);
    for (int j = 32; j < 64; ++j) x[j] = 0.f;              // block 1: zeros
    for (int j = 64; j < 96; ++j) x[j] = 0.5f * (j - 80);  // block 2: halves, ties
    x[100] = -1e30f;                                       // block 3: one huge value
    engine::q8_act a;
    engine::quantize_act_q8(x.data(), int(x.size()), a);
    for (int b = 0; b < 6; ++b) {
      float amax = 0.f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::abs(x[b * 32 + j]));
      const float d = amax / 127.f, id = d != 0.f ? 1.f / d : 0.f;
      QCOMPARE(a.d[b], d);
      int32_t sum = 0;
      for (int j = 0; j < 32; ++j) {
        const int q = int(std::nearbyint(x[b * 32 + j] * id));
        QCOMPARE(int(a.q[b * 32 + j]), q);
        sum += q;
      }
      QCOMPARE(a.sum[b], sum);
    }
    QCOMPARE(int(a.q[100]), -127);
  }

  // --- hand-computed blocks ---
  void q8_0_block_of_0_to_31() {
    std::vector<float> x(32);
    for (int i = 0; i < 32; ++i) x[i] = (float)i;
    uint8_t blk[k_q8_0_bytes];
    engine::quantize_row_q8_0(x.data(), blk, 32);
    // d = 31/127 = 0.24409..., nearest f16 = 0.244140625 = 0x33D0; q = round(i * 127/31).
    QCOMPARE(block_d(blk), (uint16_t)0x33D0);
    const auto* q = reinterpret_cast<const int8_t*>(blk + 2);
    QCOMPARE((int)q[0], 0);
    QCOMPARE((int)q[1], 4);    // 4.097
    QCOMPARE((int)q[2], 8);    // 8.194
    QCOMPARE((int)q[15], 61);  // 61.45
    QCOMPARE((int)q[16], 66);  // 65.55
    QCOMPARE((int)q[31], 127);
    std::vector<float> y(32);
    engine::dequantize_row_q8_0(blk, y.data(), 32);
    QCOMPARE(y[31], 127.f * 0.244140625f);
    QCOMPARE(y[1], 4.f * 0.244140625f);
  }

  void q8_0_zeros_and_outlier() {
    std::vector<float> x(64, 0.f);
    for (int i = 32; i < 64; ++i) x[i] = 0.01f;
    x[32 + 7] = 1000.f;
    uint8_t blk[2 * k_q8_0_bytes];
    engine::quantize_row_q8_0(x.data(), blk, 64);
    QCOMPARE(block_d(blk), (uint16_t)0);  // all-zero block: d = 0, no division by zero
    for (int i = 0; i < 32; ++i) QCOMPARE((int)(int8_t)blk[2 + i], 0);
    const uint8_t* b1 = blk + k_q8_0_bytes;
    QCOMPARE(block_d(b1), engine::f32_to_fp16(1000.f / 127.f));
    for (int i = 0; i < 32; ++i) QCOMPARE((int)(int8_t)b1[2 + i], i == 7 ? 127 : 0);  // 0.01 rounds away
    std::vector<float> y(64);
    engine::dequantize_row_q8_0(blk, y.data(), 64);
    for (int i = 0; i < 32; ++i) QCOMPARE(y[i], 0.f);
    QCOMPARE(y[39], 127.f * engine::fp16_to_f32(engine::f32_to_fp16(1000.f / 127.f)));
  }

  void q4_0_block_of_0_to_31_and_negative_max() {
    std::vector<float> x(64);
    for (int i = 0; i < 32; ++i) {
      x[i] = (float)i;
      x[32 + i] = -(float)i;
    }
    uint8_t blk[2 * k_q4_0_bytes];
    engine::quantize_row_q4_0(x.data(), blk, 64);
    // max = +31 -> d = 31/-8 = -3.875 (0xC3C0, exact in f16): 31 maps to nibble 0, i.e. -8*d.
    QCOMPARE(block_d(blk), (uint16_t)0xC3C0);
    // q_i = min(15, trunc(i / d + 8.5)): q0 = 8, q16 = trunc(4.371) = 4, q15 = trunc(4.629) = 4, q31 = 0.
    QCOMPARE((int)blk[2 + 0], 8 | 4 << 4);
    QCOMPARE((int)blk[2 + 15], 4 | 0 << 4);
    QCOMPARE((int)blk[2 + 1], 8 | 4 << 4);  // q1 = trunc(8.242) = 8, q17 = trunc(4.113) = 4
    QCOMPARE((int)blk[2 + 2], 7 | 3 << 4);  // q2 = trunc(7.984) = 7, q18 = trunc(3.855) = 3
    // max = -31 -> d = +3.875 (0x43C0) and the same nibbles.
    const uint8_t* b1 = blk + k_q4_0_bytes;
    QCOMPARE(block_d(b1), (uint16_t)0x43C0);
    QVERIFY(std::memcmp(blk + 2, b1 + 2, 16) == 0);
    std::vector<float> y(64);
    engine::dequantize_row_q4_0(blk, y.data(), 64);
    QCOMPARE(y[31], 31.f);   // (0 - 8) * -3.875, exact
    QCOMPARE(y[0], 0.f);     // (8 - 8) * d
    QCOMPARE(y[16], 15.5f);  // (4 - 8) * -3.875
    QCOMPARE(y[63], -31.f);
  }

  void q4_0_zeros_and_outlier() {
    std::vector<float> x(64, 0.f);
    for (int i = 32; i < 64; ++i) x[i] = 0.01f;
    x[32 + 20] = -1000.f;
    uint8_t blk[2 * k_q4_0_bytes];
    engine::quantize_row_q4_0(x.data(), blk, 64);
    // d = 0 / -8 = -0.0: ggml (and gguf-py) store negative zero, 0x8000, and so must we.
    QCOMPARE(block_d(blk), (uint16_t)0x8000);
    for (int i = 0; i < 16; ++i) QCOMPARE((int)blk[2 + i], 0x88);  // d = 0: every nibble is 8 (value 0)
    const uint8_t* b1 = blk + k_q4_0_bytes;
    QCOMPARE(block_d(b1), engine::f32_to_fp16(125.f));  // -1000 / -8
    QCOMPARE((int)(b1[2 + 4] >> 4), 0);                 // weight 20 is the high nibble of byte 4
    QCOMPARE((int)(b1[2 + 4] & 15), 8);
    std::vector<float> y(64);
    engine::dequantize_row_q4_0(blk, y.data(), 64);
    QCOMPARE(y[52], -1000.f);
    QCOMPARE(y[33], 0.f);
  }

  void partial_blocks_are_rejected() {
    std::vector<float> x(33, 1.f);
    std::vector<uint8_t> buf(1024);
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::quantize_row_q8_0(x.data(), buf.data(), 33));
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::quantize_row_q4_0(x.data(), buf.data(), 31));
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::dequantize_row_q4_K(buf.data(), x.data(), 32));
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::dequantize_row_q6_K(buf.data(), x.data(), 128));
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::dequantize_row_q5_0(buf.data(), x.data(), 33));
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::dequantize_row_q5_K(buf.data(), x.data(), 32));
    float out[4];
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::matvec_q8_0(out, buf.data(), x.data(), 33, 0, 1));
  }

  // Every dtype has its row in the kernels' table: the x8 facts are the formats' own, a type
  // without an x8 form is refused by name, and a value outside the enum is an error, never a read
  // past the table.
  void every_dtype_has_its_kernels() {
    using engine::DType;
    const DType all[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K,
                         DType::Q6_K, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q5_K};
    std::vector<uint8_t> zeros(4096, 0);
    for (DType t : all) {
      const bool x8 = engine::dtype_is_quantized(t);
      QCOMPARE(engine::has_x8_layout(t), x8);
      if (x8) {
        QCOMPARE(uint64_t(engine::x8_block_weights(t)), engine::dtype_block_elems(t));
        // One x8 block per 8 rows and row block: no smaller than the file's bytes (q4_K's unpacked
        // scales make it larger), and the rows past the last whole group are left out.
        const int bw = engine::x8_block_weights(t);
        const uint64_t one = engine::x8_bytes(t, 8, bw);
        QVERIFY(one >= engine::dtype_bytes(t, 8 * uint64_t(bw)));
        QCOMPARE(engine::x8_bytes(t, 23, 3 * bw), 2 * 3 * one);
      } else {
        QVERIFY_THROWS_EXCEPTION(engine::Error, engine::x8_block_weights(t));
        try {
          engine::pack_x8(t, zeros.data(), 8, 32, zeros.data());
          QFAIL("pack_x8 accepted an encoding without an x8 form");
        } catch (const engine::Error& e) {
          QVERIFY2(QString(e.what()).contains(QString::fromStdString(std::string(engine::dtype_name(t)))), e.what());
        }
      }
      // All-zero bytes are finite weights in every encoding and widen to zeros.
      QCOMPARE(engine::first_nonfinite(t, zeros.data(), 256), int64_t(-1));
      std::vector<float> row(256, 1.f);
      engine::dequantize_rows(t, zeros.data(), 256, 0, 1, row.data());
      QVERIFY(std::all_of(row.begin(), row.end(), [](float v) { return v == 0.f; }));
    }
    const auto bogus = static_cast<DType>(std::size(all));
    float out[1];
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::dequantize_rows(bogus, zeros.data(), 32, 0, 1, out));
    QVERIFY_THROWS_EXCEPTION(engine::Error, engine::first_nonfinite(bogus, zeros.data(), 32));
    QVERIFY(!engine::x8_worth_packing(DType::F16));
    QVERIFY(engine::x8_worth_packing(DType::Q8_0) && engine::x8_worth_packing(DType::Q4_0));
    for (DType t : {DType::Q4_1, DType::Q5_0, DType::Q5_1}) QVERIFY(engine::x8_worth_packing(t));
    // The names bench --json and the model info print.
    QCOMPARE(engine::dtype_name(DType::Q4_1), std::string_view("q4_1"));
    QCOMPARE(engine::dtype_name(DType::Q5_0), std::string_view("q5_0"));
    QCOMPARE(engine::dtype_name(DType::Q5_1), std::string_view("q5_1"));
    QCOMPARE(engine::dtype_name(DType::Q5_K), std::string_view("q5_K"));
    QCOMPARE(engine::dtype_bytes(DType::Q5_0, 64), uint64_t(44));
    QCOMPARE(engine::dtype_bytes(DType::Q5_K, 512), uint64_t(352));
  }

  // --- round-trip error bounds ---
  void round_trip_error_bounds() {
    const int n = 32 * 64;
    std::vector<float> x = random_floats(n, 7);
    for (int i = 0; i < n; i += 97) x[i] *= 40.f;  // outliers widen some blocks' scales
    std::vector<uint8_t> q8((size_t)n / 32 * k_q8_0_bytes), q4((size_t)n / 32 * k_q4_0_bytes);
    engine::quantize_row_q8_0(x.data(), q8.data(), n);
    engine::quantize_row_q4_0(x.data(), q4.data(), n);
    std::vector<float> y8(n), y4(n);
    engine::dequantize_row_q8_0(q8.data(), y8.data(), n);
    engine::dequantize_row_q4_0(q4.data(), y4.data(), n);
    for (int b = 0; b < n / 32; ++b) {
      float amax = 0.f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
      // The quants are rounded with the f32 scale, then d is stored as f16 (relative error
      // <= 2^-11), which adds up to |q| * d * 2^-11 on top of the rounding half-step.
      const double d8 = amax / 127.0, d4 = amax / 8.0;
      const double bound8 = d8 * (0.5 + 127.0 / 2048) + 1e-7;
      const double bound4 = d4 * (1.0 + 8.0 / 2048) + 1e-7;  // the clip at nibble 15 costs up to a full step
      for (int j = 0; j < 32; ++j) {
        const int i = b * 32 + j;
        if (std::fabs(x[i] - y8[i]) > bound8)
          QFAIL(qPrintable(QString("q8_0 element %1: %2 vs %3").arg(i).arg(x[i]).arg(y8[i])));
        if (std::fabs(x[i] - y4[i]) > bound4)
          QFAIL(qPrintable(QString("q4_0 element %1: %2 vs %3").arg(i).arg(x[i]).arg(y4[i])));
      }
    }
  }

  // Our q4_1 / q5_0 / q5_1 / q5_K quantizers, against a double-precision reading of the blocks they
  // write: every value takes the nearest point of its block's grid (value = step*q + offset, q in
  // 0..top), the grid covers the block's values (q4_1 / q5_1: its minimum and maximum; q5_K: each
  // sub-block's maximum and its minimum or 0; q5_0: its value of largest magnitude), and the step is
  // no wider than the fit needs. So every value is within half a step (q5_0: a full step for values
  // beyond the grid's short side). Inputs: Gaussian blocks with outliers, and blocks where a rounding
  // rule shows (zeros, constants of either sign, all positive, all negative, a ramp, one outlier).
  void new_quantizers_round_trip_data() {
    QTest::addColumn<QString>("name");
    for (const char* t : {"q4_1", "q5_0", "q5_1", "q5_K"}) QTest::newRow(t) << t;
  }
  void new_quantizers_round_trip() {
    QFETCH(QString, name);
    const int n = 256 * 24;
    std::vector<float> x = random_floats(n, 11, 0.05f);
    for (int i = 0; i < n; i += 131) x[i] *= 30.f;
    const auto fill = [&](int block, auto f) {
      for (int j = 0; j < 32; ++j) x[32 * block + j] = f(j);
    };
    fill(0, [](int) { return 0.f; });
    fill(1, [](int) { return 0.75f; });
    fill(2, [](int) { return -0.3f; });
    fill(3, [](int j) { return 0.1f + 0.01f * float(j); });
    fill(4, [](int j) { return -0.1f - 0.013f * float(j); });
    fill(5, [](int j) { return float(j); });
    fill(6, [](int j) { return j == 9 ? -5.f : 0.001f * float(j); });
    fill(9, [](int j) { return 1e-6f * float(j - 16); });            // f16-subnormal scales
    for (int b = 16; b < 24; ++b) fill(b, [](int) { return 0.f; });  // a q5_K super-block of zeros
    const bool k = name == "q5_K";
    const size_t bytes = name == "q4_1"   ? engine::k_q4_1_bytes
                         : name == "q5_0" ? engine::k_q5_0_bytes
                         : name == "q5_1" ? engine::k_q5_1_bytes
                                          : engine::k_q5_K_bytes;
    std::vector<uint8_t> q((size_t)n / (k ? 256 : 32) * bytes);
    std::vector<float> y(n);
    if (name == "q4_1")
      engine::quantize_row_q4_1(x.data(), q.data(), n), engine::dequantize_row_q4_1(q.data(), y.data(), n);
    if (name == "q5_0")
      engine::quantize_row_q5_0(x.data(), q.data(), n), engine::dequantize_row_q5_0(q.data(), y.data(), n);
    if (name == "q5_1")
      engine::quantize_row_q5_1(x.data(), q.data(), n), engine::dequantize_row_q5_1(q.data(), y.data(), n);
    if (k) engine::quantize_row_q5_K(x.data(), q.data(), n), engine::dequantize_row_q5_K(q.data(), y.data(), n);
    const auto half = [](const uint8_t* p) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return double(engine::fp16_to_f32(h));
    };
    const int top = name == "q4_1" ? 15 : 31;
    for (int g = 0; g < n / 32; ++g) {
      // The group's grid, from the block bytes as engine/quant.h lays them out.
      double step = 0, offset = 0;
      if (!k) {
        const uint8_t* blk = q.data() + (size_t)g * bytes;
        step = half(blk);
        offset = name == "q5_0" ? -16 * step : half(blk + 2);
      } else {
        const uint8_t* blk = q.data() + (size_t)(g / 8) * bytes;
        const int j = g % 8;
        const uint8_t* s = blk + 4;
        const int sc = j < 4 ? s[j] & 63 : (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
        const int m = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | (s[j] >> 6) << 4;
        step = half(blk) * sc;
        offset = -half(blk + 2) * m;
      }
      const double grid_lo = std::min(offset, offset + top * step), grid_hi = std::max(offset, offset + top * step);
      double lo = x[32 * g], hi = lo, big = 0;  // big: the value of largest magnitude, with its sign
      for (int j = 0; j < 32; ++j) {
        const double v = x[32 * g + j];
        lo = std::min(lo, v), hi = std::max(hi, v);
        if (std::fabs(v) > std::fabs(big)) big = v;
      }
      const double eps =
          1e-6 * std::max({std::fabs(grid_lo), std::fabs(grid_hi), std::fabs(lo), std::fabs(hi)}) + 1e-12;
      const QString where = QString("%1 group %2").arg(name).arg(g);
      // Coverage, and a step no wider than needed.
      // An f16 is within 2^-11 of its value, or 2^-25 where it is subnormal (below 2^-14).
      const auto f16_err = [](double v) { return std::max(std::fabs(v) / 2048, std::ldexp(1.0, -25)); };
      if (name == "q5_0") {
        const double slack = 16 * f16_err(big / 16);
        QVERIFY2(big >= grid_lo - slack && big <= grid_hi + slack, qPrintable(where));
        QVERIFY2(std::fabs(step) <= std::fabs(big) / 16 + f16_err(big / 16), qPrintable(where));
      } else if (!k) {
        QVERIFY2(grid_lo <= lo + eps && grid_hi >= hi - eps, qPrintable(where));
        // m rounded down and d up to an f16: the step grows by at most those two roundings.
        QVERIFY2(step <= (hi - lo + f16_err(lo)) / top + 2 * f16_err((hi - lo) / top), qPrintable(where));
      } else {
        QVERIFY2(grid_lo <= std::min(0.0, lo) + eps && grid_hi >= hi - eps, qPrintable(where));
      }
      for (int j = 0; j < 32; ++j) {
        const double v = x[32 * g + j], got = y[32 * g + j];
        double nearest = INFINITY;
        for (int c = 0; c <= top; ++c) nearest = std::min(nearest, std::fabs(v - (step * c + offset)));
        if (std::fabs(v - got) > nearest + eps)
          QFAIL(qPrintable(QString("%1 value %2: %3 -> %4, the grid has a point %5 away")
                               .arg(where)
                               .arg(j)
                               .arg(v)
                               .arg(got)
                               .arg(nearest)));
        const bool inside = v >= grid_lo - eps && v <= grid_hi + eps;
        QVERIFY2(inside || name == "q5_0", qPrintable(where));
        const double bound = (inside ? 0.5 : 1.0) * std::fabs(step) + eps;
        if (std::fabs(v - got) > bound)
          QFAIL(qPrintable(QString("%1 value %2: error %3 > %4").arg(where).arg(j).arg(std::fabs(v - got)).arg(bound)));
      }
    }
    // The zero blocks come back as zeros.
    for (int i = 0; i < 32; ++i) QCOMPARE(y[i], 0.f);
    for (int i = 16 * 32; i < 24 * 32; ++i) QCOMPARE(y[i], 0.f);
  }

  // On the same Gaussian weights the 5-bit formats are markedly closer than the 4-bit one (a step
  // half as wide: about half the RMS error), and q5_K, whose sub-block scales are 6-bit fractions of
  // one f16, stays within a few percent of q5_1's per-block f16 scales.
  void five_bits_beat_four() {
    const int n = 256 * 64;
    const std::vector<float> x = random_floats(n, 3, 0.02f);
    const auto rms = [&](void (*quant)(const float*, void*, int64_t), void (*deq)(const void*, float*, int64_t),
                         size_t block_bytes, int block = 32) {
      std::vector<uint8_t> q((size_t)n / block * block_bytes);
      std::vector<float> y(n);
      quant(x.data(), q.data(), n);
      deq(q.data(), y.data(), n);
      double e = 0;
      for (int i = 0; i < n; ++i) e += double(x[i] - y[i]) * (x[i] - y[i]);
      return std::sqrt(e / n);
    };
    const double q41 = rms(engine::quantize_row_q4_1, engine::dequantize_row_q4_1, engine::k_q4_1_bytes);
    const double q50 = rms(engine::quantize_row_q5_0, engine::dequantize_row_q5_0, engine::k_q5_0_bytes);
    const double q51 = rms(engine::quantize_row_q5_1, engine::dequantize_row_q5_1, engine::k_q5_1_bytes);
    const double q5k = rms(engine::quantize_row_q5_K, engine::dequantize_row_q5_K, engine::k_q5_K_bytes, 256);
    qInfo("RMS error of N(0, 0.02) weights: q4_1 %.3g, q5_0 %.3g, q5_1 %.3g, q5_K %.3g", q41, q50, q51, q5k);
    QVERIFY(q51 < 0.55 * q41);
    QVERIFY(q50 < 0.6 * q41);
    QVERIFY(q5k < 0.6 * q41);
    QVERIFY(q5k < 1.15 * q51);
  }

  // --- gguf-py fixtures ---
  void quantizers_match_gguf_py_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("q8_0") << "q8_0";
    QTest::newRow("q4_0") << "q4_0";
  }
  void quantizers_match_gguf_py() {
    QFETCH(QString, name);
    const QByteArray input = read_fixture(qPrintable(name + "_input.f32"));
    const QByteArray expected = read_fixture(qPrintable(name + "_blocks.bin"));
    QVERIFY2(!input.isEmpty() && !expected.isEmpty(), "fixture missing: run tests/tools/make_quant_fixture.py");
    const std::vector<float> x = as_floats(input);
    const size_t block_bytes = name == "q8_0" ? k_q8_0_bytes : k_q4_0_bytes;
    QCOMPARE((size_t)expected.size(), x.size() / 32 * block_bytes);
    std::vector<uint8_t> got((size_t)expected.size());
    if (name == "q8_0") engine::quantize_row_q8_0(x.data(), got.data(), (int64_t)x.size());
    else engine::quantize_row_q4_0(x.data(), got.data(), (int64_t)x.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != (uint8_t)expected[(qsizetype)i])
        QFAIL(qPrintable(QString("byte %1 (block %2): got 0x%3, gguf-py 0x%4")
                             .arg(i)
                             .arg(i / block_bytes)
                             .arg(got[i], 2, 16, QChar('0'))
                             .arg((uint8_t)expected[(qsizetype)i], 2, 16, QChar('0'))));
  }

  void k_dequantizers_match_gguf_py_data() {
    QTest::addColumn<QString>("name");
    for (const char* t : {"q4_K", "q6_K", "q4_1", "q5_0", "q5_1", "q5_K"}) QTest::newRow(t) << t;
  }
  void k_dequantizers_match_gguf_py() {
    QFETCH(QString, name);
    const QByteArray blocks = read_fixture(qPrintable(name + "_blocks.bin"));
    const QByteArray values = read_fixture(qPrintable(name + "_values.f32"));
    QVERIFY2(!blocks.isEmpty() && !values.isEmpty(), "fixture missing: run tests/tools/make_quant_fixture.py");
    const std::vector<float> expected = as_floats(values);
    using Dequantize = void (*)(const void*, float*, int64_t);
    const std::pair<const char*, Dequantize> by_name[] = {{"q4_K", engine::dequantize_row_q4_K},
                                                          {"q6_K", engine::dequantize_row_q6_K},
                                                          {"q4_1", engine::dequantize_row_q4_1},
                                                          {"q5_0", engine::dequantize_row_q5_0},
                                                          {"q5_1", engine::dequantize_row_q5_1},
                                                          {"q5_K", engine::dequantize_row_q5_K}};
    const auto it = std::find_if(std::begin(by_name), std::end(by_name), [&](auto& e) { return name == e.first; });
    const size_t block = name.endsWith("_K") ? 256 : 32;
    const size_t block_bytes = name == "q4_K"   ? engine::k_q4_K_bytes
                               : name == "q6_K" ? engine::k_q6_K_bytes
                               : name == "q5_K" ? engine::k_q5_K_bytes
                               : name == "q4_1" ? engine::k_q4_1_bytes
                               : name == "q5_0" ? engine::k_q5_0_bytes
                                                : engine::k_q5_1_bytes;
    QCOMPARE((size_t)blocks.size(), expected.size() / block * block_bytes);
    std::vector<float> got(expected.size());
    it->second(blocks.constData(), got.data(), (int64_t)got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      // gguf-py may associate d*sc*q differently from us; allow a few ulps of the magnitude.
      const float tol = 4e-7f * std::max(1.f, std::fabs(expected[i])) + 1e-9f;
      if (std::fabs(got[i] - expected[i]) > tol)
        QFAIL(qPrintable(QString("element %1 (block %2, index %3): got %4, gguf-py %5")
                             .arg(i)
                             .arg(i / block)
                             .arg(i % block)
                             .arg(got[i], 0, 'g', 9)
                             .arg(expected[i], 0, 'g', 9)));
    }
  }

  // Our q4_1 / q5_0 / q5_1 / q5_K quantizers' GGUF output as gguf-py reads it
  // (tests/tools/make_quant_writer_fixture.py, which runs this function with
  // WB_WRITE_QUANT_WRITER_FIXTURE set to have the file written): writer.gguf holds exactly the blocks our
  // quantizers make of writer_input.f32 today, and gguf-py's dequantization of them
  // (writer_gguf_py.f32) is value for value ours.
  void written_gguf_reads_the_same_in_gguf_py() {
    const std::vector<float> x = as_floats(read_fixture("writer_input.f32"));
    QCOMPARE(x.size(), size_t(1024));
    struct Type {
      const char* name;
      engine::io::GgmlType type;
      void (*quantize)(const float*, void*, int64_t);
      void (*dequantize)(const void*, float*, int64_t);
      size_t bytes;
    };
    const Type types[] =
        {{"q4_1", engine::io::GgmlType::Q4_1, engine::quantize_row_q4_1, engine::dequantize_row_q4_1, 32 * 20},
         {"q5_0", engine::io::GgmlType::Q5_0, engine::quantize_row_q5_0, engine::dequantize_row_q5_0, 32 * 22},
         {"q5_1", engine::io::GgmlType::Q5_1, engine::quantize_row_q5_1, engine::dequantize_row_q5_1, 32 * 24},
         {"q5_K", engine::io::GgmlType::Q5_K, engine::quantize_row_q5_K, engine::dequantize_row_q5_K, 4 * 176}};
    std::vector<std::vector<uint8_t>> blocks;
    for (const Type& t : types) {
      blocks.emplace_back(t.bytes);
      t.quantize(x.data(), blocks.back().data(), 1024);
    }
    const QByteArray out = qgetenv("WB_WRITE_QUANT_WRITER_FIXTURE");
    if (!out.isEmpty()) {
      std::vector<engine::io::GgufTensorToWrite> ts;
      for (size_t i = 0; i < std::size(types); ++i)
        ts.push_back({types[i].name, types[i].type, {256, 4}, blocks[i].data()});
      engine::io::write_gguf(out.toStdString(), {}, ts);
      return;
    }
    const std::vector<float> gguf_py = as_floats(read_fixture("writer_gguf_py.f32"));
    QVERIFY2(gguf_py.size() == 4 * 1024, "fixture missing: run tests/tools/make_quant_writer_fixture.py");
    auto f = engine::io::GgufFile::open(WB_TEST_DATA_DIR "/quant/writer.gguf");
    for (size_t i = 0; i < std::size(types); ++i) {
      const Type& t = types[i];
      const auto it = std::find_if(f->tensors().begin(), f->tensors().end(), [&](auto& e) { return e.name == t.name; });
      QVERIFY2(it != f->tensors().end(), t.name);
      QCOMPARE(it->type, t.type);
      QVERIFY2(std::memcmp(it->data, blocks[i].data(), t.bytes) == 0,
               qPrintable(QString("%1: our quantizer no longer writes writer.gguf's blocks").arg(t.name)));
      std::vector<float> ours(1024);
      t.dequantize(blocks[i].data(), ours.data(), 1024);
      for (int j = 0; j < 1024; ++j)
        if (ours[j] != gguf_py[i * 1024 + j])
          QFAIL(qPrintable(QString("%1 value %2: ours %3, gguf-py %4")
                               .arg(t.name)
                               .arg(j)
                               .arg(ours[j], 0, 'g', 9)
                               .arg(gguf_py[i * 1024 + j], 0, 'g', 9)));
    }
  }

  // --- kernels vs double precision ---
  void matvec_quantized_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    for (int kind : {(int)Kind::q8_0, (int)Kind::q4_0}) {
      const char* k = kind == (int)Kind::q8_0 ? "q8_0" : "q4_0";
      for (auto [C, OC] : {std::pair{32, 1}, {96, 7}, {768, 13}, {800, 5}, {4096, 9}, {288, 4}})
        QTest::newRow(qPrintable(QString("%1 C=%2 OC=%3").arg(k).arg(C).arg(OC))) << kind << C << OC;
    }
  }
  void matvec_quantized() {
    QFETCH(int, kind);
    QFETCH(int, C);
    QFETCH(int, OC);
    const bool q8 = kind == (int)Kind::q8_0;
    const size_t row_bytes = (size_t)C / 32 * (q8 ? k_q8_0_bytes : k_q4_0_bytes);
    const std::vector<float> Wsrc = random_floats((size_t)OC * C, 11 + C + OC, 0.05f);
    std::vector<float> x = random_floats((size_t)C, 3 + C);
    x[C / 2] = 9.f;  // an activation outlier, as in real residual streams
    std::vector<uint8_t> W((size_t)OC * row_bytes);
    std::vector<float> Wf((size_t)OC * C);
    for (int o = 0; o < OC; ++o) {
      const float* src = Wsrc.data() + (size_t)o * C;
      uint8_t* dst = W.data() + o * row_bytes;
      if (q8) {
        engine::quantize_row_q8_0(src, dst, C);
        engine::dequantize_row_q8_0(dst, Wf.data() + (size_t)o * C, C);
      } else {
        engine::quantize_row_q4_0(src, dst, C);
        engine::dequantize_row_q4_0(dst, Wf.data() + (size_t)o * C, C);
      }
    }
    // Reference 1: exact dequantized weights times the activations the kernel actually uses
    // (x rounded to int8 per block); only f32 accumulation error remains.
    engine::q8_act xq;
    engine::quantize_act_q8(x.data(), C, xq);
    std::vector<float> xr((size_t)C);
    for (int i = 0; i < C; ++i) xr[i] = xq.d[i / 32] * xq.q[i];
    std::vector<double> ref_q, mag_q, ref, mag;
    reference_matvec(Wf, xr, C, OC, ref_q, mag_q);
    // Reference 2: the true x; the activation rounding adds at most sum|w| * d_x/2 per block.
    reference_matvec(Wf, x, C, OC, ref, mag);

    // Partial row range when OC allows, to check nothing outside it is written.
    const int64_t rb = OC > 2 ? 1 : 0, re = OC > 2 ? OC - 1 : OC;
    std::vector<float> out((size_t)OC, -12345.f);
    if (q8) engine::matvec_q8_0(out.data(), W.data(), x.data(), C, rb, re);
    else engine::matvec_q4_0(out.data(), W.data(), x.data(), C, rb, re);
    std::vector<float> out_act((size_t)OC, -12345.f);
    if (q8) engine::matvec_q8_0_act(out_act.data(), W.data(), xq, rb, re);
    else engine::matvec_q4_0_act(out_act.data(), W.data(), xq, rb, re);
    for (int o = 0; o < OC; ++o) {
      if (o < rb || o >= re) {
        QCOMPARE(out[o], -12345.f);
        QCOMPARE(out_act[o], -12345.f);
        continue;
      }
      QCOMPARE(out_act[o], out[o]);
      const double tol_q = 1e-5 * mag_q[o] + 1e-6;
      if (std::fabs(out[o] - ref_q[o]) > tol_q)
        QFAIL(qPrintable(
            QString("row %1: %2 vs quantized-x reference %3 (tol %4)").arg(o).arg(out[o]).arg(ref_q[o]).arg(tol_q)));
      double act_bound = 0;
      for (int i = 0; i < C; ++i) act_bound += std::fabs((double)Wf[(size_t)o * C + i]) * xq.d[i / 32] * 0.5;
      const double tol = act_bound * 1.001 + 1e-5 * mag[o] + 1e-6;
      if (std::fabs(out[o] - ref[o]) > tol)
        QFAIL(qPrintable(QString("row %1: %2 vs f32-x reference %3 (tol %4)").arg(o).arg(out[o]).arg(ref[o]).arg(tol)));
    }
  }

  void matvec_k_types_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    for (const char* t : {"q4_K", "q6_K"})
      for (auto [C, OC] : {std::pair{256, 1}, {768, 5}, {1280, 11}})
        QTest::newRow(qPrintable(QString("%1 C=%2 OC=%3").arg(t).arg(C).arg(OC))) << QString(t) << C << OC;
  }
  void matvec_k_types() {
    QFETCH(QString, type);
    QFETCH(int, C);
    QFETCH(int, OC);
    const bool q4k = type == "q4_K";
    const size_t block_bytes = q4k ? engine::k_q4_K_bytes : engine::k_q6_K_bytes;
    const size_t nsb = (size_t)OC * C / 256;
    // Random valid super-blocks: any bits are valid except the f16 scales, set to sane values.
    std::mt19937 rng(41 + C + OC);
    std::vector<uint8_t> W(nsb * block_bytes);
    for (auto& b : W) b = (uint8_t)rng();
    std::uniform_real_distribution<float> dist(1e-4f, 2e-3f);
    for (size_t s = 0; s < nsb; ++s) {
      uint8_t* blk = W.data() + s * block_bytes;
      const uint16_t d = engine::f32_to_fp16(dist(rng)), dmin = engine::f32_to_fp16(dist(rng));
      if (q4k) {
        std::memcpy(blk, &d, 2);
        std::memcpy(blk + 2, &dmin, 2);
      } else {
        std::memcpy(blk + 208, &d, 2);
      }
    }
    std::vector<float> Wf((size_t)OC * C);
    if (q4k) engine::dequantize_row_q4_K(W.data(), Wf.data(), (int64_t)Wf.size());
    else engine::dequantize_row_q6_K(W.data(), Wf.data(), (int64_t)Wf.size());
    std::vector<float> x = random_floats((size_t)C, 13 + C);
    x[C / 3] = -7.f;
    engine::q8_act xq;
    engine::quantize_act_q8(x.data(), C, xq);
    std::vector<float> xr((size_t)C);
    for (int i = 0; i < C; ++i) xr[i] = xq.d[i / 32] * xq.q[i];
    std::vector<double> ref_q, mag_q, ref, mag;
    reference_matvec(Wf, xr, C, OC, ref_q, mag_q);
    reference_matvec(Wf, x, C, OC, ref, mag);
    const int64_t rb = OC > 2 ? 1 : 0, re = OC > 2 ? OC - 1 : OC;
    std::vector<float> out((size_t)OC, -12345.f);
    if (q4k) engine::matvec_q4_K(out.data(), W.data(), x.data(), C, rb, re);
    else engine::matvec_q6_K(out.data(), W.data(), x.data(), C, rb, re);
    for (int o = 0; o < OC; ++o) {
      if (o < rb || o >= re) {
        QCOMPARE(out[o], -12345.f);
        continue;
      }
      // Looser than q8_0/q4_0: scale and min terms are rounded separately before they are summed.
      const double tol_q = 2e-5 * mag_q[o] + 1e-6;
      if (std::fabs(out[o] - ref_q[o]) > tol_q)
        QFAIL(qPrintable(
            QString("row %1: %2 vs quantized-x reference %3 (tol %4)").arg(o).arg(out[o]).arg(ref_q[o]).arg(tol_q)));
      double act_bound = 0;
      for (int i = 0; i < C; ++i) act_bound += std::fabs((double)Wf[(size_t)o * C + i]) * xq.d[i / 32] * 0.5;
      const double tol = act_bound * 1.001 + 2e-5 * mag[o] + 1e-6;
      if (std::fabs(out[o] - ref[o]) > tol)
        QFAIL(qPrintable(QString("row %1: %2 vs f32-x reference %3 (tol %4)").arg(o).arg(out[o]).arg(ref[o]).arg(tol)));
    }
  }

  void matvec_q8_0_accepts_minus_128() {
    // ggml never writes q = -128, but a GGUF file may hold it; |w| = 128 must still work in the
    // u8 x s8 sign trick (0x80 read as unsigned is 128).
    const int C = 64;
    std::vector<uint8_t> W(2 * k_q8_0_bytes);
    std::mt19937 rng(5);
    for (int b = 0; b < 2; ++b) {
      const uint16_t d = engine::f32_to_fp16(0.01f * (b + 1));
      std::memcpy(W.data() + b * k_q8_0_bytes, &d, 2);
      for (int j = 0; j < 32; ++j) W[b * k_q8_0_bytes + 2 + j] = (uint8_t)(j % 3 == 0 ? 0x80 : rng());
    }
    std::vector<float> Wf(C), x = random_floats(C, 9);
    engine::dequantize_row_q8_0(W.data(), Wf.data(), C);
    QCOMPARE(Wf[0], -128.f * engine::fp16_to_f32(engine::f32_to_fp16(0.01f)));
    engine::q8_act xq;
    engine::quantize_act_q8(x.data(), C, xq);
    double ref = 0, mag = 0;
    for (int i = 0; i < C; ++i) {
      ref += (double)Wf[i] * xq.d[i / 32] * xq.q[i];
      mag += std::fabs((double)Wf[i] * xq.d[i / 32] * xq.q[i]);
    }
    float out = 0.f;
    engine::matvec_q8_0(&out, W.data(), x.data(), C, 0, 1);
    QVERIFY2(std::fabs(out - ref) <= 1e-5 * mag + 1e-6, qPrintable(QString("%1 vs %2").arg(out).arg(ref)));
  }

  void matvec_f16_data() {
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    for (auto [C, OC] : {std::pair{1, 1}, {37, 3}, {96, 7}, {768, 13}, {800, 5}, {4103, 6}})
      QTest::newRow(qPrintable(QString("C=%1 OC=%2").arg(C).arg(OC))) << C << OC;
  }
  void matvec_f16() {
    QFETCH(int, C);
    QFETCH(int, OC);
    const std::vector<float> Wsrc = random_floats((size_t)OC * C, 5 + C, 0.05f);
    const std::vector<float> x = random_floats((size_t)C, 17 + C);
    std::vector<uint16_t> W(Wsrc.size());
    std::vector<float> Wf(Wsrc.size());
    for (size_t i = 0; i < W.size(); ++i) {
      W[i] = engine::f32_to_fp16(Wsrc[i]);
      Wf[i] = engine::fp16_to_f32(W[i]);
    }
    std::vector<double> ref, mag;
    reference_matvec(Wf, x, C, OC, ref, mag);
    const int64_t rb = OC > 2 ? 1 : 0, re = OC > 2 ? OC - 1 : OC;
    std::vector<float> out((size_t)OC, -12345.f);
    engine::matvec_f16(out.data(), W.data(), x.data(), C, rb, re);
    for (int o = 0; o < OC; ++o) {
      if (o < rb || o >= re) {
        QCOMPARE(out[o], -12345.f);
        continue;
      }
      const double tol = 1e-5 * mag[o] + 1e-7;
      if (std::fabs(out[o] - ref[o]) > tol)
        QFAIL(qPrintable(QString("row %1: %2 vs %3 (tol %4)").arg(o).arg(out[o]).arg(ref[o]).arg(tol)));
    }
  }

  void first_nonfinite_finds_the_first_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("n");
    QTest::addColumn<QList<int>>("bad");  // positions made inf / nan; -1 expected when empty
    for (engine::DType t : {engine::DType::F32, engine::DType::F16, engine::DType::BF16}) {
      const QString name = QString::fromLatin1(engine::dtype_name(t));
      QTest::newRow(qPrintable(name + " clean")) << int(t) << 10000 << QList<int>{};
      QTest::newRow(qPrintable(name + " first")) << int(t) << 10000 << QList<int>{0};
      QTest::newRow(qPrintable(name + " chunk end")) << int(t) << 10000 << QList<int>{4095};
      QTest::newRow(qPrintable(name + " next chunk")) << int(t) << 10000 << QList<int>{4096, 9000};
      QTest::newRow(qPrintable(name + " last")) << int(t) << 10000 << QList<int>{9999};
      QTest::newRow(qPrintable(name + " two in a chunk")) << int(t) << 5000 << QList<int>{4500, 4200};
    }
  }
  void first_nonfinite_finds_the_first() {
    QFETCH(int, type);
    QFETCH(int, n);
    QFETCH(QList<int>, bad);
    const engine::DType t = engine::DType(type);
    const size_t width = t == engine::DType::F32 ? 4 : 2;
    std::vector<uint8_t> bytes(size_t(n) * width);
    // Finite values with every other bit pattern around: large, tiny, negative, subnormal.
    std::mt19937 rng(3);
    for (int i = 0; i < n; ++i) {
      const float v = std::ldexp(float(rng() % 1000) - 500.f, int(rng() % 40) - 20);
      if (t == engine::DType::F32) std::memcpy(&bytes[size_t(i) * 4], &v, 4);
      else {
        uint32_t f;
        std::memcpy(&f, &v, 4);
        const uint16_t h =
            t == engine::DType::F16 ? engine::f32_to_fp16(std::clamp(v, -60000.f, 60000.f)) : uint16_t(f >> 16);
        std::memcpy(&bytes[size_t(i) * 2], &h, 2);
      }
    }
    int want = -1;
    for (int k = 0; k < bad.size(); ++k) {
      const int i = bad[k];
      const uint32_t f32_bits = k % 2 ? 0x7fc00001u : 0xff800000u;  // nan, -inf
      const uint16_t f16_bits = k % 2 ? 0x7e01 : 0xfc00, bf16_bits = k % 2 ? 0x7fc1 : 0xff80;
      if (t == engine::DType::F32) std::memcpy(&bytes[size_t(i) * 4], &f32_bits, 4);
      else std::memcpy(&bytes[size_t(i) * 2], t == engine::DType::F16 ? &f16_bits : &bf16_bits, 2);
      want = want < 0 ? i : std::min(want, i);
    }
    QCOMPARE(engine::first_nonfinite(t, bytes.data(), n), int64_t(want));
  }

  void matmul_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("OC");
    for (const char* t : {"q8_0", "q4_0", "f16"})
      for (auto [N, C, OC] : {std::tuple{1, 96, 7}, {5, 800, 131}, {3, 64, 70}})
        QTest::newRow(qPrintable(QString("%1 N=%2 C=%3 OC=%4").arg(t).arg(N).arg(C).arg(OC)))
            << QString(t) << N << C << OC;
  }
  void matmul() {
    QFETCH(QString, type);
    QFETCH(int, N);
    QFETCH(int, C);
    QFETCH(int, OC);
    const std::vector<float> Wsrc = random_floats((size_t)OC * C, 23 + C, 0.05f);
    const std::vector<float> X = random_floats((size_t)N * C, 29 + N);
    std::vector<uint8_t> Wq;
    std::vector<uint16_t> Wh;
    std::vector<float> Wf((size_t)OC * C);
    if (type == "f16") {
      Wh.resize(Wsrc.size());
      for (size_t i = 0; i < Wh.size(); ++i) {
        Wh[i] = engine::f32_to_fp16(Wsrc[i]);
        Wf[i] = engine::fp16_to_f32(Wh[i]);
      }
    } else {
      const size_t row_bytes = (size_t)C / 32 * (type == "q8_0" ? k_q8_0_bytes : k_q4_0_bytes);
      Wq.resize((size_t)OC * row_bytes);
      if (type == "q8_0") {
        engine::quantize_row_q8_0(Wsrc.data(), Wq.data(), (int64_t)OC * C);
        engine::dequantize_row_q8_0(Wq.data(), Wf.data(), (int64_t)OC * C);
      } else {
        engine::quantize_row_q4_0(Wsrc.data(), Wq.data(), (int64_t)OC * C);
        engine::dequantize_row_q4_0(Wq.data(), Wf.data(), (int64_t)OC * C);
      }
    }
    const int64_t rb = 1, re = OC - 1;
    std::vector<float> out((size_t)N * OC, -12345.f);
    if (type == "f16") engine::matmul_typed(out.data(), engine::DType::F16, Wh.data(), X.data(), N, C, OC, rb, re);
    else if (type == "q8_0")
      engine::matmul_typed(out.data(), engine::DType::Q8_0, Wq.data(), X.data(), N, C, OC, rb, re);
    else engine::matmul_typed(out.data(), engine::DType::Q4_0, Wq.data(), X.data(), N, C, OC, rb, re);
    for (int n = 0; n < N; ++n) {
      const std::vector<float> x(X.begin() + (size_t)n * C, X.begin() + (size_t)(n + 1) * C);
      std::vector<double> ref, mag;
      reference_matvec(Wf, x, C, OC, ref, mag);
      for (int o = 0; o < OC; ++o) {
        const float got = out[(size_t)n * OC + o];
        if (o < rb || o >= re) {
          QCOMPARE(got, -12345.f);
          continue;
        }
        const double tol = 1e-5 * mag[o] + 1e-7;
        if (std::fabs(got - ref[o]) > tol)
          QFAIL(qPrintable(QString("n=%1 row %2: %3 vs %4 (tol %5)").arg(n).arg(o).arg(got).arg(ref[o]).arg(tol)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestQuant)
#include "test_quant.moc"
