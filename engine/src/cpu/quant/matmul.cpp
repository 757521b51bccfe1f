// Quantized / f16 weights x f32 matrix (prefill): out (N, OC) = X (N, C) * W^T over a row range.
//
// Correctness first: weight rows are widened to f32 in tiles (tile_rows) and handed to sgemm, so
// the result is the exactly dequantized weights times X in f32 (no activation rounding). A tile is
// about 1 MiB, small enough to stay in L2, so each weight byte is read from memory once per call
// however large N is. Every encoding takes this one path; only its row widening (dtype_traits)
// differs. Callers wanting the integer path for N == 1 use matvec_* instead (it rounds x to int8).
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "dtype_traits.h"

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

// Rows [row_begin, row_end) widened tile by tile (widen: n elements of whole blocks to f32), each
// tile times X by sgemm. One call of widen per tile, so it may be an indirect one.
void matmul_tiled(float* out, const uint8_t* W, uint64_t row_bytes, WidenFn widen, const float* X, int N, int C,
                  int64_t OC, int64_t row_begin, int64_t row_end) {
  thread_local std::vector<float> tile;
  const int64_t k_tile = tile_rows(C);
  tile.resize((size_t)(k_tile * C));
  for (int64_t o0 = row_begin; o0 < row_end; o0 += k_tile) {
    const int64_t rows = std::min(k_tile, row_end - o0);
    widen(W + static_cast<uint64_t>(o0) * row_bytes, tile.data(), rows * C);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, (int)rows, C, 1.0f, X, C, tile.data(), C, 0.0f, out + o0,
                (int)OC);
  }
}

}  // namespace

void matmul_typed(float* out, DType t, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin,
                  int64_t row_end) {
  if (N < 0 || C < 0 || row_begin < 0 || row_begin > row_end || row_end > OC)
    throw Error("matmul_typed: bad shape or row range");
  const DTypeTraits& traits = dtype_traits(t);
  require_multiple(C, static_cast<int64_t>(dtype_block_elems(t)), "matmul_typed");
  if (N == 0 || row_begin == row_end) return;
  matmul_tiled(out, static_cast<const uint8_t*>(W), dtype_bytes(t, static_cast<uint64_t>(C)), traits.widen, X, N, C, OC,
               row_begin, row_end);
}

}  // namespace engine
