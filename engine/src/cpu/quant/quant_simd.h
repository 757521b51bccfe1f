// SIMD helpers shared by the quantized matvec kernels (internal).
//
// int8 dot products: the kernels need sum(u8 * s8) over 32 bytes. VNNI does that in one
// instruction (vpdpbusd); plain AVX2 needs maddubs (u8*s8 pairs -> s16) then madd with ones
// (s16 pairs -> s32). maddubs saturates at +-32767, which our operands never reach: |u8| <= 127
// (q8_0 magnitudes) or <= 15 (q4_0 nibbles) times |s8| <= 127, two products per lane.
#pragma once

#include <cstdint>

#include "cpu/simd_intrinsics.h"

namespace engine::quant_detail {

// For the x8 kernels' per-tile and per-block functions (matmul_x8_*.cpp): each instruction set's
// kernels sit in a file of their own, and in a file that small GCC's unit-growth limit leaves some of
// them out of line (a call per tile, or per block for q6_K decode) where it inlined them all in
// one larger file. Forcing it keeps the loops as they were measured.
#define WB_KERNEL_INLINE inline __attribute__((always_inline))

#if defined(__AVX2__) && defined(__FMA__)
#define WB_QUANT_AVX2 1
// The int8 dot is one instruction (vpdpbusd) on 256-bit vectors.
#if (defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__)
#define WB_X8_VNNI 1
#endif
// The x8 kernels' 512-bit set (matmul_x8_avx512.cpp) needs vpdpbusd on zmm and byte ops on zmm.
#if defined(WB_X8_VNNI) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define WB_X8_AVX512 1
#endif

// acc + per-lane sums of groups of 4 u8*s8 products (8 int32 lanes).
inline __m256i dot_u8s8_acc(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(acc, u, s);
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  const __m256i p16 = _mm256_maddubs_epi16(u, s);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
#endif
}

// Software prefetch for the decode weight streams: `lines` cache lines starting `distance` bytes past
// p. Weights read in place from a memory-mapped GGUF sit in 4 KiB page-cache pages, and the hardware
// prefetchers stop at page boundaries, so a decode stream waited on memory latency rather than
// bandwidth; fetching a few KiB ahead crosses them. Measured on a 2-core AVX-512 Xeon, 1.2B Llama:
// q4_K_M decode 13.1 -> 30.9 tok/s (with the vectorised q4_K kernel), q4_0 36 -> 41, q8_0 24.8 ->
// 26.3, f16 10.7 -> 13.2; the 256-bit paths (AVX2 machines), as a Haswell build on the same Xeon:
// q8_0 18.5 -> 20.2, q4_0 26.6 -> 29.4, f16 10.7 -> 12.0 (medians of 3 alternating runs).
// Prefill reuses each weight across tokens from cache and does not prefetch.
inline void prefetch_lines(const void* p, int distance, int lines) {
  const char* at = static_cast<const char*>(p) + distance;
  for (int l = 0; l < lines; ++l) _mm_prefetch(at + 64 * l, _MM_HINT_T0);
}

inline float hsum_ps256(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}
#endif

}  // namespace engine::quant_detail
