// Row-range dequantization for every weight encoding, and the finiteness scan the loader runs on
// weights it keeps in their file encoding.
//
// Rows of an (OC, C) matrix are dtype_bytes(t, C) bytes apart, so any row range is one contiguous
// run of whole blocks: the per-type row dequantizers can take it in one call.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

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

}  // namespace

void dequantize_rows(DType t, const void* W, int C, int64_t row_begin, int64_t rows, float* dst) {
  if (C < 0 || row_begin < 0 || rows < 0) throw Error("dequantize_rows: negative shape");
  const uint64_t row_bytes = dtype_bytes(t, static_cast<uint64_t>(C));  // throws on a partial block
  const auto* src = static_cast<const uint8_t*>(W) + static_cast<uint64_t>(row_begin) * row_bytes;
  const int64_t n = rows * C;
  switch (t) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: {
      const auto* h = reinterpret_cast<const uint16_t*>(src);
      int64_t i = 0;
#if defined(__F16C__)
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(h + i))));
#endif
      for (; i < n; ++i) dst[i] = half_to_f32(h[i]);
      return;
    }
    case DType::BF16: {
      const auto* h = reinterpret_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
      return;
    }
    case DType::Q8_0: return dequantize_row_q8_0(src, dst, n);
    case DType::Q4_0: return dequantize_row_q4_0(src, dst, n);
    case DType::Q4_K: return dequantize_row_q4_K(src, dst, n);
    case DType::Q6_K: return dequantize_row_q6_K(src, dst, n);
  }
  throw Error("dequantize_rows: unknown dtype");
}

int64_t first_nonfinite(DType t, const void* W, int64_t n) {
  if (n < 0) throw Error("first_nonfinite: negative count");
  const auto* p = static_cast<const uint8_t*>(W);
  switch (t) {
    // An exponent of all ones means inf or nan: bits 30..23 (f32), 14..10 (f16), 14..7 (bf16).
    case DType::F32: return first_with_exponent_all_ones<uint32_t>(p, n, 0x7f800000u);
    case DType::F16: return first_with_exponent_all_ones<uint16_t>(p, n, 0x7c00u);
    case DType::BF16: return first_with_exponent_all_ones<uint16_t>(p, n, 0x7f80u);
    case DType::Q8_0:
    case DType::Q4_0: {
      require_multiple(n, k_qblock, "first_nonfinite");
      const size_t bytes = t == DType::Q8_0 ? k_q8_0_bytes : k_q4_0_bytes;  // d is each block's first field
      for (int64_t b = 0; b < n / k_qblock; ++b) {
        uint16_t d;
        std::memcpy(&d, p + b * bytes, 2);
        if (!half_finite(d)) return b * k_qblock;
      }
      return -1;
    }
    case DType::Q4_K: {
      require_multiple(n, k_kblock, "first_nonfinite");
      const auto* blocks = static_cast<const block_q4_K*>(W);
      for (int64_t b = 0; b < n / k_kblock; ++b)
        if (!half_finite(blocks[b].d) || !half_finite(blocks[b].dmin)) return b * k_kblock;
      return -1;
    }
    case DType::Q6_K: {
      require_multiple(n, k_kblock, "first_nonfinite");
      const auto* blocks = static_cast<const block_q6_K*>(W);
      for (int64_t b = 0; b < n / k_kblock; ++b)
        if (!half_finite(blocks[b].d)) return b * k_kblock;
      return -1;
    }
  }
  throw Error("first_nonfinite: unknown dtype");
}

}  // namespace engine
