// CPU f32 matmul, forward beside backward (shapes and accumulate rules: backend.h). Weights in file
// encodings (f16, q8_0, q4_0, K-quants) go through cpu_matmul_typed.cpp instead.
//
// Forward: a threaded SIMD matrix-vector product for single rows (decode, where the cost is reading the
// weights once, so the loop must stream memory at full bandwidth), the register-tiled panel GEMM for
// two rows and more (cpu_gemm_f32.cpp), OpenBLAS sgemm in builds without AVX2. Backward: sgemm, one call
// per thread over its own block of output columns.
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "cpu/cpu_gemm_f32.h"
#include "cpu/cpu_ops.h"
#include "cpu/simd_dot.h"

namespace engine::cpu {

void matmul_forward(ThreadPool& pool, std::vector<float>& x_panels, float* out, const float* inp, const float* weight,
                    const float* bias, int N, int C, int OC) {
  if (N == 1) {
    // One row: y[o] = dot(W[o], x). Threads split the output rows so each streams its own weights.
    pool.parallel_for(OC, [&](int64_t begin, int64_t end) {
      matvec_rows(out, weight, inp, C, begin, end);
      if (bias)
        for (int64_t o = begin; o < end; ++o) out[o] += bias[o];
    });
    return;
  }
  // From two rows on, even a mostly empty 16-token panel beats sgemm: with few rows both read the
  // weights once from memory, and sgemm also packs them (cpu_gemm_f32.cpp).
  if (C >= 1 && gemm_f32_panels_available()) return gemm_f32_panels(pool, x_panels, out, inp, weight, bias, N, C, OC);
  // No AVX2 tiles in this build: each thread computes a block of output columns with sgemm,
  // out[:, b:e] = inp @ W[b:e]^T (+ bias[b:e]). Blocks are multiples of 16 columns so no two
  // threads write the same cache line of a row.
  const int64_t blocks = (OC + 15) / 16;
  pool.parallel_for(
      blocks,
      [&](int64_t bb, int64_t be) {
        const int64_t b = bb * 16, e = std::min<int64_t>(be * 16, OC);
        const int w = static_cast<int>(e - b);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, w, C, 1.0f, inp, C, weight + b * C, C, 0.0f, out + b,
                    OC);
        if (bias)
          for (int64_t n = 0; n < N; ++n) {
            float* o = out + n * OC;
            for (int64_t i = b; i < e; ++i) o[i] += bias[i];
          }
      },
      /*chunks_per_thread=*/1);
}

void matmul_backward(ThreadPool& pool, float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  // As in the forward, OpenBLAS runs single-threaded inside our pool and each task owns a block of
  // output columns: one sgemm per thread (chunks_per_thread = 1), since each call has a fixed cost.
  if (dinp) {
    // dinp[:, b:e] += dout (N,OC) @ W[:, b:e]
    const int64_t blocks = (C + kColBlock - 1) / kColBlock;
    pool.parallel_for(
        blocks,
        [&](int64_t bb, int64_t be) {
          const int64_t b = bb * kColBlock, e = std::min<int64_t>(be * kColBlock, C);
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, static_cast<int>(e - b), OC, 1.0f, dout, OC,
                      weight + b, C, 1.0f, dinp + b, C);
        },
        /*chunks_per_thread=*/1);
  }
  if (dweight) {
    // dW[b:e, :] += dout[:, b:e]^T @ inp (N,C)
    const int64_t blocks = (OC + kColBlock - 1) / kColBlock;
    pool.parallel_for(
        blocks,
        [&](int64_t bb, int64_t be) {
          const int64_t b = bb * kColBlock, e = std::min<int64_t>(be * kColBlock, OC);
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(e - b), C, N, 1.0f, dout + b, OC, inp,
                      C, 1.0f, dweight + b * C, C);
        },
        /*chunks_per_thread=*/1);
  }
  if (dbias) {
    for_column_blocks(pool, OC, [&](int64_t c0, int64_t c1) {
      for (int64_t n = 0; n < N; ++n) {
        const float* d = dout + n * OC;
        for (int64_t i = c0; i < c1; ++i) dbias[i] += d[i];
      }
    });
  }
}

}  // namespace engine::cpu
