// Packing the block-quantized weights into the x8 layout (quant.h): done once at load, so the x8 kernels
// (x8_kernels.h) can treat 8 rows as one vector. Every scale and quant keeps its value (q8_0 / q4_0 / q4_1 /
// q4_K / q5_K: a byte shuffle; q6_K: its 6-bit values re-spread over bytes; q5_0 / q5_1: their fifth bits
// regrouped per chunk), so the packed product equals the unpacked one exactly.
#include <cstring>
#include <type_traits>

#include "dtype_traits.h"
#include "engine/checked.h"

namespace engine {
namespace quant_detail {

namespace {

// Every group of 8 rows, block by block: PackRow(o, src, r) moves row r's block src into the group's
// x8 block o. per_row: a row's blocks (C / 32, or C / 256 for the K types).
template <typename Block, typename BlockX8, auto PackRow>
void pack_groups(const void* W, int64_t OC, int64_t per_row, void* dst) {
  const auto* rows = static_cast<const Block*>(W);
  auto* out = static_cast<BlockX8*>(dst);
  for (int64_t g = 0; g < OC / k_x8_rows; ++g)
    for (int64_t b = 0; b < per_row; ++b) {
      BlockX8& o = out[g * per_row + b];
      for (int r = 0; r < k_x8_rows; ++r) PackRow(o, rows[(g * k_x8_rows + r) * per_row + b], r);
    }
}

// q8_0 / q4_0: the scale, and the quants 4 bytes at a time (Chunks 32-byte chunks).
template <typename Block, typename BlockX8, int Chunks>
void pack_row_32(BlockX8& o, const Block& src, int r) {
  o.d[r] = src.d;
  for (int c = 0; c < Chunks; ++c) std::memcpy(o.qs + 32 * c + 4 * r, src.qs + 4 * c, 4);
}

// Row r of a q4_K / q5_K group: its scales and mins unpacked once (q4_K_scales_bytes), its nibbles moved 4
// bytes at a time like q4_0's. Both block types share these fields.
template <typename Group, typename Block>
void pack_k_row(Group& o, const Block& src, int r) {
  o.d[r] = src.d;
  o.dmin[r] = src.dmin;
  uint8_t sc_m[16];
  q4_K_scales_bytes(src.scales, sc_m);
  for (int j = 0; j < 8; ++j) {
    o.sc[j][r] = sc_m[j];
    o.m[j][r] = sc_m[8 + j];
  }
  for (int c = 0; c < 4; ++c)
    for (int k = 0; k < 8; ++k) std::memcpy(o.qs[c] + 32 * k + 4 * r, src.qs + 32 * c + 4 * k, 4);
}

// q4_1 / q5_0 / q5_1: nibbles as q4_0's, mins beside the scales, and each row's 32 fifth bits regrouped
// into 4 bytes so that byte i holds those of the weights in position i of the 4 chunks (quant_blocks.h).
template <typename Block, typename BlockX8>
void pack_row_q5(BlockX8& o, const Block& src, int r) {
  constexpr bool has_min = !std::is_same_v<Block, block_q5_0>;
  constexpr bool has_high = !std::is_same_v<Block, block_q4_1>;
  o.d[r] = src.d;
  if constexpr (has_min) o.m[r] = src.m;
  for (int c = 0; c < 4; ++c) std::memcpy(o.qs + 32 * c + 4 * r, src.qs + 4 * c, 4);
  if constexpr (has_high) {
    const uint32_t h = q5_high_bits(src.qh);
    for (int i = 0; i < 4; ++i) {
      uint32_t byte = 0;
      for (int c = 0; c < 4; ++c) byte |= ((h >> (4 * c + i)) & 1) << c | ((h >> (16 + 4 * c + i)) & 1) << (4 + c);
      o.qh[4 * r + i] = static_cast<uint8_t>(byte);
    }
  }
}

// q5_K: q4_K's packing plus the fifth-bit bytes, moved 4 at a time like the nibbles.
void pack_row_q5_K(block_q5_Kx8& o, const block_q5_K& src, int r) {
  pack_k_row(o, src, r);
  for (int k = 0; k < 8; ++k) std::memcpy(o.qh + 32 * k + 4 * r, src.qh + 4 * k, 4);
}

// q6_K: the row's 256 values are read in natural order (q6_K_unsigned_values) and spread into the
// three-bytes-for-four form of quant_blocks.h.
void pack_row_q6_K(block_q6_Kx8& o, const block_q6_K& src, int r) {
  uint8_t u[k_kblock];
  o.d[r] = src.d;
  for (int j = 0; j < 16; ++j) o.sc[j][r] = src.scales[j];
  q6_K_unsigned_values(src, u);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 8; ++k)
      for (int i = 0; i < 4; ++i) {
        const int p = 4 * k + i;
        const uint8_t fourth = u[128 * h + 96 + p];
        for (int v = 0; v < 3; ++v)
          o.q[h][k][v][4 * r + i] = static_cast<uint8_t>(u[128 * h + 32 * v + p] | ((fourth >> (2 * v)) & 3) << 6);
      }
}

}  // namespace

void pack_x8_q8_0(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q8_0, block_q8_0x8, pack_row_32<block_q8_0, block_q8_0x8, 8>>(W, OC, C / k_qblock, dst);
}
void pack_x8_q4_0(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q4_0, block_q4_0x8, pack_row_32<block_q4_0, block_q4_0x8, 4>>(W, OC, C / k_qblock, dst);
}
void pack_x8_q4_K(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q4_K, block_q4_Kx8, pack_k_row<block_q4_Kx8, block_q4_K>>(W, OC, C / k_kblock, dst);
}
void pack_x8_q6_K(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q6_K, block_q6_Kx8, pack_row_q6_K>(W, OC, C / k_kblock, dst);
}
void pack_x8_q4_1(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q4_1, block_q4_1x8, pack_row_q5<block_q4_1, block_q4_1x8>>(W, OC, C / k_qblock, dst);
}
void pack_x8_q5_0(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q5_0, block_q5_0x8, pack_row_q5<block_q5_0, block_q5_0x8>>(W, OC, C / k_qblock, dst);
}
void pack_x8_q5_1(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q5_1, block_q5_1x8, pack_row_q5<block_q5_1, block_q5_1x8>>(W, OC, C / k_qblock, dst);
}
void pack_x8_q5_K(const void* W, int64_t OC, int C, void* dst) {
  pack_groups<block_q5_K, block_q5_Kx8, pack_row_q5_K>(W, OC, C / k_kblock, dst);
}

}  // namespace quant_detail

using namespace quant_detail;

namespace {

const X8Traits& checked_x8(DType t, int64_t OC, int C) {
  const X8Traits* x8 = dtype_traits(t).x8;
  if (!x8) throw Error("x8 layout: no packed form for " + std::string(dtype_name(t)));
  if (OC < 0) throw Error("x8 layout: negative row count");
  require_multiple(C, x8->block_weights, "x8 layout");
  return *x8;
}

}  // namespace

uint64_t x8_bytes(DType t, int64_t OC, int C) {
  const X8Traits& x8 = checked_x8(t, OC, C);
  return checked_mul(checked_mul(static_cast<uint64_t>(OC / k_x8_rows), static_cast<uint64_t>(C / x8.block_weights),
                                 "x8 layout"),
                     x8.block_bytes, "x8 layout");
}

void pack_x8(DType t, const void* W, int64_t OC, int C, void* dst) { checked_x8(t, OC, C).pack(W, OC, C, dst); }

}  // namespace engine
