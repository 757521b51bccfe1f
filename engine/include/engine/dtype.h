// Element types of tensors and their conversions.
//
// f16/bf16 conversions are exact IEEE round-to-nearest-even (f32 -> half) and exact widening
// (half -> f32); quantized block types follow GGUF's layout (q8_0: 32 int8 + one f16 scale,
// q4_0: 32 nibbles + one f16 scale; q4_1 / q5_0 / q5_1: 32 weights in 20 / 22 / 24 bytes; the K types
// q4_K / q5_K / q6_K: 256 weights in 144 / 176 / 210 bytes, see engine/quant.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace engine {

// Values are appended, never renumbered: the kernels' and formats' tables are indexed by them.
enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, Q4_1, Q5_0, Q5_1, Q5_K };

std::string_view dtype_name(DType t);

// Bytes taken by `n` elements of type `t`; quantized types need n to be a multiple of their block.
// Throws engine::Error on overflow or a partial block.
uint64_t dtype_bytes(DType t, uint64_t n);
// Elements per block: 1 (f32/f16/bf16), 32 (q8_0/q4_0/q4_1/q5_0/q5_1), 256 (q4_K/q5_K/q6_K).
uint64_t dtype_block_elems(DType t);
// True for the block-quantized types (every type but f32, f16, bf16).
bool dtype_is_quantized(DType t);

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ffu;
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | mant << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;  // inf / nan
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t f32_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds to >= 65520: overflow to inf
  if (absx < 0x38800000u) {                                    // result is subnormal or zero
    if (absx < 0x33000000u) return (uint16_t)sign;
    const uint32_t e = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return (uint16_t)(sign | r);
  }
  uint32_t r = absx - ((127 - 15) << 23);
  r = (r + 0xfffu + ((r >> 13) & 1)) >> 13;  // round to nearest even
  return (uint16_t)(sign | r);
}

inline float bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

}  // namespace engine
