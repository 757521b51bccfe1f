// The integer kernels over the x8 layout (quant.h), one set per instruction set (internal).
//
// Each set computes out[n * OC + 8g + r] for groups g in [g0, g1), lanes r and tokens n in [0, N)
// from packed weights P and activations X rounded to int8 (quantize_act_q8_rows), the same numbers
// from every set. The sets live in their own files and compile only where the build's instruction
// set allows; dtype_traits.cpp picks one per encoding at compile time:
//   matmul_x8_avx512.cpp  AVX-512 with VNNI: two groups per zmm; an odd last group by the AVX2 set
//   matmul_x8_avx2.cpp    AVX2 + FMA (VNNI when present): one group per ymm
//   matmul_x8_portable.cpp plain C, any machine
// q4_1 / q5_0 / q5_1 / q5_K have a portable and a 256-bit set (matmul_x8_q5_portable.cpp,
// matmul_x8_q5_avx2.cpp); an AVX-512 build runs their 256-bit one.
#pragma once

#include <cstdint>

#include "quant_blocks.h"
#include "quant_simd.h"

namespace engine::quant_detail {

// Tokens per prefill tile of the 256-bit and portable kernels: each weight block is unpacked once
// for this many tokens.
inline constexpr int k_tile_tokens = 4;

// Row n's activation block b: quants at q + (n * nb + b) * 32, scale and sum at [n * nb + b].
struct ActRows {
  const int8_t* q;
  const float* d;
  const int32_t* sum;
  int64_t nb;
  // q6_K's SIMD kernels only: the quants plus 128 as unsigned bytes, laid out as q.
  const uint8_t* qu = nullptr;
  // q6_K's 256-bit decode without VNNI: per block the sums of its two 16-value halves (q8_act).
  const int32_t* half_sums = nullptr;
  const uint8_t* ublock(int64_t n, int64_t b) const { return qu + at(n, b) * k_qblock; }
  int64_t at(int64_t n, int64_t b) const { return n * nb + b; }
  const int8_t* block(int64_t n, int64_t b) const { return q + at(n, b) * k_qblock; }
};

// One x8 product over groups [g0, g1) of P (an array of the encoding's x8 blocks).
using X8GroupsFn = void (*)(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);

namespace x8_portable {
void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q5_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q5_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q5_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
}  // namespace x8_portable

#if defined(WB_QUANT_AVX2)
// q6_K reads X.qu (the activations as unsigned bytes) and X.half_sums, which the caller must have filled.
namespace x8_avx2 {
void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q5_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q5_1(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q5_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
}  // namespace x8_avx2
#endif

#if defined(WB_X8_AVX512)
namespace x8_avx512 {
void matmul_q8_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_0(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q4_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
void matmul_q6_K(float* out, const void* P, const ActRows& X, int N, int64_t OC, int64_t g0, int64_t g1);
}  // namespace x8_avx512
#endif

}  // namespace engine::quant_detail
