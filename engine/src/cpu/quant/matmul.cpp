// Quantized / f16 weights x f32 matrix (prefill): out (N, OC) = X (N, C) * W^T over a row range.
//
// Correctness first: weight rows are widened to f32 in tiles (tile_rows) and handed to sgemm, so
// the result is the exactly dequantized weights times X in f32 (no activation rounding). A tile is
// about 1 MiB, small enough to stay in L2, so each weight byte is read from memory once per call
// however large N is. Callers wanting the
// integer path for N == 1 use matvec_* instead (it rounds x to int8).
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

namespace {

// Tile rows: about 1 MiB of widened weights (fits L2 beside sgemm's packed panels), at least 16.
// Fewer, larger tiles matter because sgemm re-packs X on every call: with 64-row tiles that
// packing, repeated OC/64 times, cost as much as the multiplication at N = 128, C = 768.
int64_t tile_rows(int C) {
  const int64_t rows = (int64_t{1} << 20) / (4 * std::max(C, 1));
  return std::max<int64_t>(16, rows / 16 * 16);
}

template <typename Widen>
void matmul_tiled(float* out, const float* X, int N, int C, int64_t OC, int64_t row_begin, int64_t row_end, Widen widen) {
  thread_local std::vector<float> tile;
  const int64_t k_tile = tile_rows(C);
  tile.resize((size_t)(k_tile * C));
  for (int64_t o0 = row_begin; o0 < row_end; o0 += k_tile) {
    const int64_t rows = std::min(k_tile, row_end - o0);
    widen(o0, rows, tile.data());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, (int)rows, C, 1.0f, X, C, tile.data(), C, 0.0f, out + o0, (int)OC);
  }
}

void check_args(int N, int C, int64_t OC, int64_t row_begin, int64_t row_end, const char* what) {
  if (N < 0 || C < 0 || row_begin < 0 || row_begin > row_end || row_end > OC)
    throw Error(std::string(what) + ": bad shape or row range");
}

}  // namespace

void matmul_q8_0(float* out, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin, int64_t row_end) {
  check_args(N, C, OC, row_begin, row_end, "matmul_q8_0");
  require_multiple(C, k_qblock, "matmul_q8_0");
  if (N == 0 || row_begin == row_end) return;
  const auto* rows = static_cast<const block_q8_0*>(W);
  const int64_t nb = C / k_qblock;
  matmul_tiled(out, X, N, C, OC, row_begin, row_end,
               [&](int64_t o0, int64_t n, float* dst) { dequantize_row_q8_0(rows + o0 * nb, dst, n * C); });
}

void matmul_q4_0(float* out, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin, int64_t row_end) {
  check_args(N, C, OC, row_begin, row_end, "matmul_q4_0");
  require_multiple(C, k_qblock, "matmul_q4_0");
  if (N == 0 || row_begin == row_end) return;
  const auto* rows = static_cast<const block_q4_0*>(W);
  const int64_t nb = C / k_qblock;
  matmul_tiled(out, X, N, C, OC, row_begin, row_end,
               [&](int64_t o0, int64_t n, float* dst) { dequantize_row_q4_0(rows + o0 * nb, dst, n * C); });
}

void matmul_f16(float* out, const uint16_t* W, const float* X, int N, int C, int64_t OC, int64_t row_begin, int64_t row_end) {
  check_args(N, C, OC, row_begin, row_end, "matmul_f16");
  if (N == 0 || row_begin == row_end) return;
  matmul_tiled(out, X, N, C, OC, row_begin, row_end, [&](int64_t o0, int64_t n, float* dst) {
    const uint16_t* src = W + o0 * C;
    const int64_t count = n * C;
    int64_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(src + i))));
#endif
    for (; i < count; ++i) dst[i] = half_to_f32(src[i]);
  });
}

void matmul_q4_K(float* out, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin, int64_t row_end) {
  check_args(N, C, OC, row_begin, row_end, "matmul_q4_K");
  require_multiple(C, k_kblock, "matmul_q4_K");
  if (N == 0 || row_begin == row_end) return;
  const auto* rows = static_cast<const block_q4_K*>(W);
  const int64_t nb = C / k_kblock;
  matmul_tiled(out, X, N, C, OC, row_begin, row_end,
               [&](int64_t o0, int64_t n, float* dst) { dequantize_row_q4_K(rows + o0 * nb, dst, n * C); });
}

void matmul_q6_K(float* out, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin, int64_t row_end) {
  check_args(N, C, OC, row_begin, row_end, "matmul_q6_K");
  require_multiple(C, k_kblock, "matmul_q6_K");
  if (N == 0 || row_begin == row_end) return;
  const auto* rows = static_cast<const block_q6_K*>(W);
  const int64_t nb = C / k_kblock;
  matmul_tiled(out, X, N, C, OC, row_begin, row_end,
               [&](int64_t o0, int64_t n, float* dst) { dequantize_row_q6_K(rows + o0 * nb, dst, n * C); });
}

void matmul_typed(float* out, DType t, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin,
                  int64_t row_end) {
  switch (t) {
    case DType::Q8_0: return matmul_q8_0(out, W, X, N, C, OC, row_begin, row_end);
    case DType::Q4_0: return matmul_q4_0(out, W, X, N, C, OC, row_begin, row_end);
    case DType::Q4_K: return matmul_q4_K(out, W, X, N, C, OC, row_begin, row_end);
    case DType::Q6_K: return matmul_q6_K(out, W, X, N, C, OC, row_begin, row_end);
    case DType::F16: return matmul_f16(out, static_cast<const uint16_t*>(W), X, N, C, OC, row_begin, row_end);
    case DType::F32:
    case DType::BF16: break;
  }
  check_args(N, C, OC, row_begin, row_end, "matmul_typed");
  if (N == 0 || row_begin == row_end) return;
  matmul_tiled(out, X, N, C, OC, row_begin, row_end,
               [&](int64_t o0, int64_t n, float* dst) { dequantize_rows(t, W, C, o0, n, dst); });
}

}  // namespace engine
