// The CPU backend's f32 prefill product over row-major weights (internal; see cpu_gemm_f32.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/thread_pool.h"

namespace engine {

// True where this build has the register tiles (AVX2 + FMA + F16C); elsewhere callers use sgemm.
bool gemm_f32_panels_available();

// out (N, OC) = X (N, C) @ W (OC, C)^T + bias (bias may be null), W row-major as stored in the
// model (read in place, never copied whole). X is packed once per call into `x_panels` (reused
// between calls), then `pool` splits the output rows. Requires N >= 1, C >= 1, OC >= 1 and a build
// where gemm_f32_panels_available().
void gemm_f32_panels(ThreadPool& pool, std::vector<float>& x_panels, float* out, const float* X, const float* W,
                     const float* bias, int N, int C, int OC);

}  // namespace engine
