// f32 prefill product over row-major weights: X is packed once per call, shared by every thread.
//
// Each thread used to call sgemm on its own block of output columns. sgemm packs both operands on
// every call, so every thread packed the whole of X again: a fixed cost per thread while its share
// of the multiplication shrinks with the thread count. On one core of the 2-core AVX-512 Xeon
// (OpenBLAS SkylakeX kernels, N = 128, C = 768) sgemm made 134 GFLOP/s of all 768 columns but 101
// of the 48 one thread gets at 16 threads; on the 16-core GPU host GPT-2 f32 prefill was 0.81x
// llama.cpp's at 16 threads.
//
// Here X (N x C, small next to the weights) is laid out once per call in panels of 16 tokens
// (panel[k * 16 + j] = X[16 p + j][k], zero past N), by all threads, and panel_tile.h's register
// tiles broadcast the weights straight from their rows: lanes are tokens, tile rows are weight
// rows. So the weights are read in place (an f32 GGUF stays memory-mapped; training's weights
// change every step) and nothing is packed per thread. The output of a tile comes out transposed
// (rows x tokens) into a per-thread scratch block and is written to `out` when the block is done.
// Measured whole calls on one core (packing included), N = 128: 124-145 GFLOP/s against sgemm's
// 122-131 for the GPT-2 and 1.2B shapes (C = 768 / 2048 / 3072, OC = 768 to 8192), 76-80 against
// 68-74 as a Haswell build; at 2 threads GPT-2 f32 prefill went 950 -> 1035 tok/s, the 1.2B's
// 113 -> 116. With few rows the panels are mostly padding but still ahead, since both read the
// weights once from memory and sgemm packs them as well: one core, C = 768 / 2048, OC = 2304 /
// 5632, 2 rows 11.6-11.8 GFLOP/s against 8.8-9.4, 8 rows 44-47 against 31.
#include "cpu_gemm_f32.h"

#include <algorithm>

#include "engine/error.h"
#include "panel_tile.h"

namespace engine {

#if defined(WB_PANEL_TILE_AVX2)

namespace {
using namespace panel_detail;

// Output rows per scratch block: about 48, in whole 16-float lines so that no two threads write
// the same cache line of an output row; smaller when that leaves threads idle (a 256-row k / v
// projection over 16 threads).
int64_t rows_per_block(int64_t OC, int threads) {
  const int64_t fair = OC / std::max(threads, 1) / 16 * 16;
  return std::clamp<int64_t>(fair, 16, 48);
}

// Weight rows per step: one 12-row AVX-512 tile or two 6-row AVX2 tiles. Their chunk of columns
// (12 x k_chunk floats, 12 / 24 KiB) stays in L1 while the token panels pass over it; the panels'
// chunk (k_block_tokens x k_chunk floats) stays in L2.
constexpr int k_step_rows = 12;
#if defined(WB_PANEL_TILE_AVX512)
constexpr int k_chunk = 256;
#else
constexpr int k_chunk = 512;
#endif
// Tokens per pass over a block's weights: long prompts are walked in blocks so that the panels'
// chunk stays in L2 (256 tokens x 256 columns = 256 KiB).
constexpr int k_block_tokens = 256;

void pack_token_panels(float* panels, const float* X, int N, int C, int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    float* dst = panels + p * C * k_lanes;
    for (int j = 0; j < k_lanes; ++j) {
      const int64_t n = p * k_lanes + j;
      if (n < N) {
        const float* row = X + n * C;
        for (int k = 0; k < C; ++k) dst[static_cast<int64_t>(k) * k_lanes + j] = row[k];
      } else {
        for (int k = 0; k < C; ++k) dst[static_cast<int64_t>(k) * k_lanes + j] = 0.0f;
      }
    }
  }
}

// Output rows [o0, o1) for every token: tiles into the transposed scratch, then out (+ bias).
void rows_block(float* out, const float* panels, const float* W, const float* bias, int N, int C, int OC, int64_t o0,
                int64_t o1) {
  thread_local std::vector<float> scratch;
  const int64_t panel_count = (N + k_lanes - 1) / k_lanes;
  const int64_t ld = panel_count * k_lanes;
  scratch.resize(static_cast<size_t>((o1 - o0) * ld));
  const int64_t panel_stride = static_cast<int64_t>(C) * k_lanes;
  constexpr int64_t block_panels = k_block_tokens / k_lanes;
  for (int64_t b0 = 0; b0 < panel_count; b0 += block_panels) {
    const int64_t b1 = std::min(panel_count, b0 + block_panels);
    for (int64_t o = o0; o < o1; o += k_step_rows) {
      const int count = static_cast<int>(std::min<int64_t>(k_step_rows, o1 - o));
      for (int k0 = 0; k0 < C; k0 += k_chunk) {
        const int kc = std::min(k_chunk, C - k0);
        const float* rows = W + o * C + k0;
        float* t = scratch.data() + (o - o0) * ld;
#if defined(WB_PANEL_TILE_AVX512)
        for (int64_t p = b0; p < b1; p += 2)
          (p + 2 <= b1 ? sweep512<float, 2> : sweep512<float, 1>)(t + p * k_lanes, ld,
                                                                  panels + p * panel_stride + k0 * k_lanes,
                                                                  panel_stride, rows, C, count, kc, k0 == 0);
#else
        for (int64_t p = b0; p < b1; ++p)
          sweep256<float>(t + p * k_lanes, ld, panels + p * panel_stride + k0 * k_lanes, rows, C, count, kc, k0 == 0);
#endif
      }
    }
  }
  for (int64_t n = 0; n < N; ++n) {
    float* dst = out + n * OC;
    const float* src = scratch.data() + n;
    if (bias)
      for (int64_t o = o0; o < o1; ++o) dst[o] = src[(o - o0) * ld] + bias[o];
    else
      for (int64_t o = o0; o < o1; ++o) dst[o] = src[(o - o0) * ld];
  }
}

}  // namespace

bool gemm_f32_panels_available() { return true; }

void gemm_f32_panels(ThreadPool& pool, std::vector<float>& x_panels, float* out, const float* X, const float* W,
                     const float* bias, int N, int C, int OC) {
  if (N < 1 || C < 1 || OC < 1) throw Error("gemm_f32_panels: empty shape");
  const int64_t panel_count = (N + k_lanes - 1) / k_lanes;
  x_panels.resize(static_cast<size_t>(panel_count * C * k_lanes));
  pool.parallel_for(panel_count, [&](int64_t p0, int64_t p1) { pack_token_panels(x_panels.data(), X, N, C, p0, p1); });
  const int64_t block = rows_per_block(OC, pool.size());
  const int64_t blocks = (OC + block - 1) / block;
  pool.parallel_for(blocks, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      rows_block(out, x_panels.data(), W, bias, N, C, OC, b * block, std::min<int64_t>(OC, (b + 1) * block));
  });
}

#else

bool gemm_f32_panels_available() { return false; }

void gemm_f32_panels(ThreadPool&, std::vector<float>&, float*, const float*, const float*, const float*, int, int,
                     int) {
  throw Error("gemm_f32_panels: this build has no AVX2 + FMA + F16C tiles");
}

#endif

}  // namespace engine
