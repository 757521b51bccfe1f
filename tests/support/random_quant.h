// Test helpers: weight matrices in every encoding the kernels read, from a seeded generator.
//
// q8_0 / q4_0 / f16 / bf16 come from the engine's own quantizers and conversions of random f32
// values; q4_K / q6_K / q4_1 / q5_0 / q5_1 / q5_K (which the engine does not quantize to) are random
// bytes with scales (and mins) chosen so that weights stay around +-scale, since every bit pattern of
// their quants, fifth bits and packed scales is a valid block. Either way, tests compare kernels with the exact dequantized values of these bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "engine/dtype.h"
#include "engine/quant.h"

// (OC, C) weights encoded as `t`, row-major, rows back to back.
inline std::vector<uint8_t> random_weights(engine::DType t, int OC, int C, uint32_t seed, float scale = 0.1f) {
  using engine::DType;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, scale);
  const uint64_t row = engine::dtype_bytes(t, static_cast<uint64_t>(C));
  std::vector<uint8_t> out(row * static_cast<uint64_t>(OC));
  const size_t n = static_cast<size_t>(OC) * C;
  if (t == DType::Q4_K || t == DType::Q6_K) {
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : out) b = static_cast<uint8_t>(byte(rng));
    const size_t bytes = t == DType::Q4_K ? engine::k_q4_K_bytes : engine::k_q6_K_bytes;
    std::uniform_real_distribution<float> ud(0.5f, 1.5f);
    for (size_t off = 0; off < out.size(); off += bytes) {
      if (t == DType::Q4_K) {
        // w = d*sc*q - dmin*m, sc, m <= 63, q <= 15: d = dmin ~ scale/500 keeps |w| below ~2*scale.
        const uint16_t d = engine::f32_to_fp16(scale / 500.f * ud(rng)),
                       dmin = engine::f32_to_fp16(scale / 1000.f * ud(rng));
        std::memcpy(out.data() + off, &d, 2);
        std::memcpy(out.data() + off + 2, &dmin, 2);
      } else {
        // w = d*scale*(q-32), int8 scale, |q-32| <= 32: d ~ scale/2000 keeps |w| below ~2*scale.
        const uint16_t d = engine::f32_to_fp16(scale / 2000.f * ud(rng));
        std::memcpy(out.data() + off + 208, &d, 2);
      }
    }
    return out;
  }
  if (t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::Q5_K) {
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : out) b = static_cast<uint8_t>(byte(rng));
    const size_t bytes = engine::dtype_bytes(t, engine::dtype_block_elems(t));
    std::uniform_real_distribution<float> ud(0.5f, 1.5f);
    const auto put = [&](size_t at, float v) {
      const uint16_t h = engine::f32_to_fp16(v);
      std::memcpy(out.data() + at, &h, 2);
    };
    for (size_t off = 0; off < out.size(); off += bytes) {
      // Values q in 0..15 (q4_1) or 0..31, centred by the offset or the min: |w| <= ~scale.
      const float d = (t == DType::Q4_1 ? scale / 7.5f : scale / 15.5f) * ud(rng);
      if (t == DType::Q5_K) {
        put(off, scale / 1000.f * ud(rng));      // w = d*sc*q - dmin*m: sc, m <= 63, q <= 31
        put(off + 2, scale / 1000.f * ud(rng));
      } else {
        put(off, d);
        if (t != DType::Q5_0) put(off + 2, -d * (t == DType::Q4_1 ? 7.5f : 15.5f) * ud(rng));
      }
    }
    return out;
  }
  std::vector<float> w(n);
  for (auto& v : w) v = nd(rng);
  switch (t) {
    case DType::F32: std::memcpy(out.data(), w.data(), n * 4); break;
    case DType::F16:
    case DType::BF16:
      for (size_t i = 0; i < n; ++i) {
        const uint16_t h = t == DType::F16 ? engine::f32_to_fp16(w[i]) : engine::f32_to_bf16(w[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      break;
    case DType::Q8_0: engine::quantize_row_q8_0(w.data(), out.data(), static_cast<int64_t>(n)); break;
    case DType::Q4_0: engine::quantize_row_q4_0(w.data(), out.data(), static_cast<int64_t>(n)); break;
    default: break;
  }
  return out;
}

// The same bytes widened to f32 by the engine's dequantizer (the value every kernel must agree with).
inline std::vector<float> widened(engine::DType t, const std::vector<uint8_t>& bytes, int OC, int C) {
  std::vector<float> w(static_cast<size_t>(OC) * C);
  engine::dequantize_rows(t, bytes.data(), C, 0, OC, w.data());
  return w;
}
