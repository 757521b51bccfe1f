// Row-range dequantization for every weight encoding, and the finiteness scan the loader runs on
// weights it keeps in their file encoding.
//
// Rows of an (OC, C) matrix are dtype_bytes(t, C) bytes apart, so any row range is one contiguous
// run of whole blocks: the per-type row dequantizers can take it in one call.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dtype_traits.h"

namespace engine {
namespace quant_detail {

namespace {

bool half_finite(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

// The index of the first of n values (of type Bits, read from p) whose `exponent` bits are all set,
// or -1. Chunks are tested without an early exit, which the compiler vectorises (the check runs
// over every weight of an f32 / f16 model at load: 2-5 GB for a 1B model); only a chunk that has
// one is searched.
template <typename Bits>
int64_t first_with_exponent_all_ones(const uint8_t* p, int64_t n, Bits exponent) {
  constexpr int64_t k_chunk = 4096;
  for (int64_t i0 = 0; i0 < n; i0 += k_chunk) {
    const int64_t m = std::min(k_chunk, n - i0);
    const uint8_t* c = p + static_cast<size_t>(i0) * sizeof(Bits);
    unsigned any = 0;
    for (int64_t i = 0; i < m; ++i) {
      Bits v;
      std::memcpy(&v, c + static_cast<size_t>(i) * sizeof(Bits), sizeof(Bits));
      any |= static_cast<unsigned>((v & exponent) == exponent);
    }
    if (!any) continue;
    for (int64_t i = 0; i < m; ++i) {
      Bits v;
      std::memcpy(&v, c + static_cast<size_t>(i) * sizeof(Bits), sizeof(Bits));
      if ((v & exponent) == exponent) return i0 + i;
    }
  }
  return -1;
}

// Block types: with finite scales every weight is finite, so only the scales are read.
template <typename Block, typename ScalesFinite>
int64_t first_nonfinite_block(const void* W, int64_t n, int block_elems, ScalesFinite scales_finite) {
  require_multiple(n, block_elems, "first_nonfinite");
  const auto* blocks = static_cast<const Block*>(W);
  for (int64_t b = 0; b < n / block_elems; ++b)
    if (!scales_finite(blocks[b])) return b * block_elems;
  return -1;
}

}  // namespace

void widen_f32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void widen_f16(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(h + i))));
#endif
  for (; i < n; ++i) dst[i] = half_to_f32(h[i]);
}

void widen_bf16(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
}

// An exponent of all ones means inf or nan: bits 30..23 (f32), 14..10 (f16), 14..7 (bf16).
int64_t first_nonfinite_f32(const void* W, int64_t n) {
  return first_with_exponent_all_ones<uint32_t>(static_cast<const uint8_t*>(W), n, 0x7f800000u);
}
int64_t first_nonfinite_f16(const void* W, int64_t n) {
  return first_with_exponent_all_ones<uint16_t>(static_cast<const uint8_t*>(W), n, 0x7c00u);
}
int64_t first_nonfinite_bf16(const void* W, int64_t n) {
  return first_with_exponent_all_ones<uint16_t>(static_cast<const uint8_t*>(W), n, 0x7f80u);
}

int64_t first_nonfinite_q8_0(const void* W, int64_t n) {
  return first_nonfinite_block<block_q8_0>(W, n, k_qblock, [](const block_q8_0& b) { return half_finite(b.d); });
}
int64_t first_nonfinite_q4_0(const void* W, int64_t n) {
  return first_nonfinite_block<block_q4_0>(W, n, k_qblock, [](const block_q4_0& b) { return half_finite(b.d); });
}
int64_t first_nonfinite_q4_K(const void* W, int64_t n) {
  return first_nonfinite_block<block_q4_K>(W, n, k_kblock,
                                           [](const block_q4_K& b) { return half_finite(b.d) && half_finite(b.dmin); });
}
int64_t first_nonfinite_q6_K(const void* W, int64_t n) {
  return first_nonfinite_block<block_q6_K>(W, n, k_kblock, [](const block_q6_K& b) { return half_finite(b.d); });
}
int64_t first_nonfinite_q4_1(const void* W, int64_t n) {
  return first_nonfinite_block<block_q4_1>(W, n, k_qblock,
                                           [](const block_q4_1& b) { return half_finite(b.d) && half_finite(b.m); });
}
int64_t first_nonfinite_q5_0(const void* W, int64_t n) {
  return first_nonfinite_block<block_q5_0>(W, n, k_qblock, [](const block_q5_0& b) { return half_finite(b.d); });
}
int64_t first_nonfinite_q5_1(const void* W, int64_t n) {
  return first_nonfinite_block<block_q5_1>(W, n, k_qblock,
                                           [](const block_q5_1& b) { return half_finite(b.d) && half_finite(b.m); });
}
int64_t first_nonfinite_q5_K(const void* W, int64_t n) {
  return first_nonfinite_block<block_q5_K>(W, n, k_kblock,
                                           [](const block_q5_K& b) { return half_finite(b.d) && half_finite(b.dmin); });
}

}  // namespace quant_detail

using namespace quant_detail;

void dequantize_rows(DType t, const void* W, int C, int64_t row_begin, int64_t rows, float* dst) {
  if (C < 0 || row_begin < 0 || rows < 0) throw Error("dequantize_rows: negative shape");
  const WidenFn widen = dtype_traits(t).widen;
  const uint64_t row_bytes = dtype_bytes(t, static_cast<uint64_t>(C));  // throws on a partial block
  const auto* src = static_cast<const uint8_t*>(W) + static_cast<uint64_t>(row_begin) * row_bytes;
  widen(src, dst, rows * C);
}

int64_t first_nonfinite(DType t, const void* W, int64_t n) {
  if (n < 0) throw Error("first_nonfinite: negative count");
  return dtype_traits(t).first_nonfinite(W, n);
}

}  // namespace engine
