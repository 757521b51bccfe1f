// Loads and broadcasts shared by the 256-bit x8 kernel files (matmul_x8_avx2.cpp for q8_0 / q4_0 /
// q4_K / q6_K, matmul_x8_q5_avx2.cpp for q4_1 / q5_0 / q5_1 / q5_K; internal). Lane r is row r of a group.
#pragma once

#include <cstring>

#include "x8_kernels.h"

#if defined(WB_QUANT_AVX2)

namespace engine::quant_detail::x8_avx2_ops {

// 4 activation bytes broadcast to all 8 lanes.
inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The 8 rows' f16 scales (or mins) as floats.
inline __m256 row_scales(const uint16_t* d) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
}

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// int16 pairs summed into int32 lanes.
inline __m256i widen_pairs(__m256i s16) { return _mm256_madd_epi16(s16, _mm256_set1_epi16(1)); }

// 8 unsigned bytes (the rows' sub-block scales or mins of a K type) as floats.
inline __m256 bytes8(const uint8_t* b) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b))));
}

}  // namespace engine::quant_detail::x8_avx2_ops

#endif  // WB_QUANT_AVX2
