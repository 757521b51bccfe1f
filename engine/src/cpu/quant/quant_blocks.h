// Block structs and small helpers shared by the quant/*.cpp files (internal, not installed).
//
// The structs mirror the byte layouts documented in engine/quant.h; the static_asserts pin them so
// a padding surprise can never silently shift every weight of a GGUF tensor.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/quant.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace engine::quant_detail {

struct block_q8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct block_q4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct block_q4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct block_q6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
struct block_q4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[16];
};
struct block_q5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct block_q5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct block_q5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// x8 layout (quant.h): 8 rows' block b; qs[32c + 4r + i] = row r's qs[4c + i].
struct block_q8_0x8 {
  uint16_t d[8];
  int8_t qs[256];
};
struct block_q4_0x8 {
  uint16_t d[8];
  uint8_t qs[128];
};
// q4_K x8 layout (quant.h): 8 rows' super-block. Scales and mins unpacked to bytes, [sub-block][row];
// qs[c][32k + 4r + i] = row r's qs[32c + 4k + i], so chunk c holds sub-block 2c in its low nibbles and
// 2c + 1 in its high nibbles, as the file's chunk does, for 8 rows.
struct block_q4_Kx8 {
  uint16_t d[8];
  uint16_t dmin[8];
  uint8_t sc[8][8];
  uint8_t m[8][8];
  uint8_t qs[4][256];
};
// q6_K x8 layout (quant.h): 8 rows' super-block, d and the int8 scales ([group][row]) as in the file,
// and the 6-bit values u = q + 32 three bytes for four: q[h][k][v][4r + i] holds position 4k + i of
// row r in activation blocks 4h + v (its low 6 bits, v = 0..2), and 2 bits of block 4h + 3's value
// in its top 2 bits (bits 2v, 2v + 1 of it). So three of every four blocks are one mask away from the
// unsigned operand, and the fourth is put together from the three top-bit pairs; no wider than the file.
struct block_q6_Kx8 {
  uint16_t d[8];
  int8_t sc[16][8];
  uint8_t q[2][8][3][32];
};
// q4_1 / q5_0 / q5_1 x8 layouts: q4_0's nibbles, the rows' mins beside their scales, and the fifth
// bits regrouped to follow the nibbles: byte 4r + i of qh holds in bit c (0..3) the fifth bit of row
// r's weight 4c + i (the low nibble of chunk c's byte 4r + i) and in bit 4 + c that of weight
// 16 + 4c + i (its high nibble). So chunk c's fifth bits are one shift and mask from one load.
struct block_q4_1x8 {
  uint16_t d[8];
  uint16_t m[8];
  uint8_t qs[128];
};
struct block_q5_0x8 {
  uint16_t d[8];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct block_q5_1x8 {
  uint16_t d[8];
  uint16_t m[8];
  uint8_t qh[32];
  uint8_t qs[128];
};
// q5_K x8 layout: q4_K's, plus the fifth bits as the file has them (bit j of a byte for sub-block j)
// interleaved like the nibbles: qh[32k + 4r + i] = row r's qh[4k + i], so chunk c's 32-byte piece k
// finds its low nibbles' fifth bits at bit 2c and its high nibbles' at bit 2c + 1 of qh[32k ..].
struct block_q5_Kx8 {
  uint16_t d[8];
  uint16_t dmin[8];
  uint8_t sc[8][8];
  uint8_t m[8][8];
  uint8_t qh[256];
  uint8_t qs[4][256];
};
static_assert(sizeof(block_q4_1) == k_q4_1_bytes);
static_assert(sizeof(block_q5_0) == k_q5_0_bytes);
static_assert(sizeof(block_q5_1) == k_q5_1_bytes);
static_assert(sizeof(block_q5_K) == k_q5_K_bytes);
static_assert(sizeof(block_q4_1x8) == 8 * k_q4_1_bytes);
static_assert(sizeof(block_q5_0x8) == 8 * k_q5_0_bytes);
static_assert(sizeof(block_q5_1x8) == 8 * k_q5_1_bytes);
static_assert(sizeof(block_q5_Kx8) == 32 + 128 + 256 + 1024);
static_assert(sizeof(block_q4_Kx8) == 32 + 128 + 1024);
static_assert(sizeof(block_q6_Kx8) == 8 * k_q6_K_bytes);
static_assert(sizeof(block_q8_0x8) == 8 * k_q8_0_bytes);
static_assert(sizeof(block_q4_0x8) == 8 * k_q4_0_bytes);
static_assert(sizeof(block_q8_0) == k_q8_0_bytes);
static_assert(sizeof(block_q4_0) == k_q4_0_bytes);
static_assert(sizeof(block_q4_K) == k_q4_K_bytes);
static_assert(sizeof(block_q6_K) == k_q6_K_bytes);

// Scale loads sit in the inner loop of every kernel; the F16C instruction is one op where the
// portable conversion is a dozen.
inline float half_to_f32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return fp16_to_f32(h);
#endif
}

// q4_K sub-block j (0..7): 6-bit scale and min, packed into 12 bytes (layout in q4_k.cpp). Shared
// by the dequantizer and the matvec kernel so the two can never disagree.
inline void q4_K_scale_min(const uint8_t* s, int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
    m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

// The 8 sub-blocks' 6-bit scales and mins of a super-block as bytes: sc[0..7] then m[0..7]. The same
// bit layout as q4_K_scale_min, four sub-blocks per 32-bit word: for j < 4 both live in the low 6
// bits of bytes j (sc) and j + 4 (m); for j >= 4 the low 4 bits come from byte j + 4 (sc: low
// nibble, m: high nibble) and the top 2 bits from the top of bytes j - 4 (sc) and j (m).
inline void q4_K_scales_bytes(const uint8_t* s12, uint8_t out[16]) {
  uint32_t w[3];
  std::memcpy(w, s12, 12);
  constexpr uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, top2 = 0x03030303;
  const uint32_t sc_lo = w[0] & low6, m_lo = w[1] & low6;
  const uint32_t sc_hi = (w[2] & low4) | (((w[0] >> 6) & top2) << 4);
  const uint32_t m_hi = ((w[2] >> 4) & low4) | (((w[1] >> 6) & top2) << 4);
  const uint32_t v[4] = {sc_lo, sc_hi, m_lo, m_hi};
  std::memcpy(out, v, 16);
}

// A q6_K super-block's 256 values u = q + 32 (0..63) in natural order: the one place that reads the
// file's bit layout (documented in q6_k.cpp), for the dequantizer, the portable matvec and pack_x8.
inline void q6_K_unsigned_values(const block_q6_K& b, uint8_t u[256]) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const uint8_t ql0 = b.ql[64 * h + l], ql1 = b.ql[64 * h + 32 + l], qh = b.qh[32 * h + l];
      u[128 * h + l] = static_cast<uint8_t>((ql0 & 15) | (qh & 3) << 4);
      u[128 * h + l + 32] = static_cast<uint8_t>((ql1 & 15) | ((qh >> 2) & 3) << 4);
      u[128 * h + l + 64] = static_cast<uint8_t>((ql0 >> 4) | ((qh >> 4) & 3) << 4);
      u[128 * h + l + 96] = static_cast<uint8_t>((ql1 >> 4) | ((qh >> 6) & 3) << 4);
    }
}

// The fifth bits of a q5_0 / q5_1 block, bit j for weight j (the file's 4 bytes, little-endian).
inline uint32_t q5_high_bits(const uint8_t qh[4]) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  return h;
}

// A 32-weight block's unsigned values in weight order: the nibbles as q4_0 places them (byte j: weight
// j low, weight j + 16 high), each plus 16 where `high` (q5_high_bits; 0 for q4_1) has bit j set. The
// one reader of the q4_1 / q5_0 / q5_1 bit layout, for the dequantizers, the matvecs and pack_x8.
inline void q5_unsigned_values(const uint8_t qs[16], uint32_t high, uint8_t u[32]) {
  for (int j = 0; j < 16; ++j) {
    u[j] = static_cast<uint8_t>((qs[j] & 15) | ((high >> j) & 1) << 4);
    u[j + 16] = static_cast<uint8_t>((qs[j] >> 4) | ((high >> (j + 16)) & 1) << 4);
  }
}

// A q5_K super-block's 256 values (0..31) in weight order: chunk c of qs gives sub-block 2c in its low
// nibbles and 2c + 1 in its high ones (as q4_K), and bit j of qh[l] is the fifth bit of weight l of
// sub-block j.
inline void q5_K_unsigned_values(const block_q5_K& b, uint8_t u[256]) {
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      const uint8_t q = b.qs[32 * c + l], h = b.qh[l];
      u[64 * c + l] = static_cast<uint8_t>((q & 15) | ((h >> (2 * c)) & 1) << 4);
      u[64 * c + 32 + l] = static_cast<uint8_t>((q >> 4) | ((h >> (2 * c + 1)) & 1) << 4);
    }
}

inline void require_multiple(int64_t n, int64_t block, const char* what) {
  if (n < 0 || n % block != 0)
    throw Error(std::string(what) + ": element count " + std::to_string(n) + " is not a multiple of " +
                std::to_string(block));
}

}  // namespace engine::quant_detail
