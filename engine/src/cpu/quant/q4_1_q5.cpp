// q4_1 / q5_0 / q5_1 dequantization (blocks -> f32): the 32-weight formats llama-quantize writes for
// Q4_1 / Q5_0 / Q5_1 files, and for the tensors of K-quant files whose rows are not whole 256-weight
// blocks (Q4_K_M falls back to q5_0 there). quantize_q4_1_q5.cpp writes them.
//
// All three share q4_0's nibble placement (byte j: weight j low, weight j + 16 high). q5_0 / q5_1 add a
// fifth bit per weight from a 32-bit little-endian word (bit j for weight j). q4_0 and q5_0 are
// symmetric around an offset (w = d*(q - 16) for q5_0); q4_1 and q5_1 carry an f16 min m instead:
// w = d*q + m.
#include <type_traits>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

namespace {

template <typename Block>
void dequantize_with_min(const void* src, float* dst, int64_t n, const char* what) {
  require_multiple(n, k_qblock, what);
  const auto* in = static_cast<const Block*>(src);
  uint8_t u[k_qblock];
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    uint32_t high = 0;
    if constexpr (std::is_same_v<Block, block_q5_1>) high = q5_high_bits(in[b].qh);
    q5_unsigned_values(in[b].qs, high, u);
    const float d = half_to_f32(in[b].d), m = half_to_f32(in[b].m);
    for (int j = 0; j < k_qblock; ++j) dst[b * k_qblock + j] = d * static_cast<float>(u[j]) + m;
  }
}

}  // namespace

void dequantize_row_q4_1(const void* src, float* dst, int64_t n) {
  dequantize_with_min<block_q4_1>(src, dst, n, "dequantize_row_q4_1");
}

void dequantize_row_q5_1(const void* src, float* dst, int64_t n) {
  dequantize_with_min<block_q5_1>(src, dst, n, "dequantize_row_q5_1");
}

void dequantize_row_q5_0(const void* src, float* dst, int64_t n) {
  require_multiple(n, k_qblock, "dequantize_row_q5_0");
  const auto* in = static_cast<const block_q5_0*>(src);
  uint8_t u[k_qblock];
  for (int64_t b = 0; b < n / k_qblock; ++b) {
    q5_unsigned_values(in[b].qs, q5_high_bits(in[b].qh), u);
    const float d = half_to_f32(in[b].d);
    for (int j = 0; j < k_qblock; ++j) dst[b * k_qblock + j] = d * static_cast<float>(u[j] - 16);
  }
}

}  // namespace engine
