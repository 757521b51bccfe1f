// The CPU backend's matmul over weights in their file encoding (internal; see backend_cpu.cpp).
#pragma once

#include "engine/quant.h"
#include "engine/thread_pool.h"
#include "engine/weight_ref.h"

namespace engine {

// out (N,OC) = inp (N,C) @ W(OC,C)^T + bias for W in any non-f32 encoding, rows split over `pool`.
// N == 1 (decode): inp is rounded to int8 once into `act` and every thread runs the integer
// matvec_*_act kernel on its own rows (f16: matvec_f16, no rounding). N > 1 (prefill): each thread
// widens tiles of its own rows and multiplies them with sgemm (no activation rounding).
void cpu_matmul_typed(ThreadPool& pool, q8_act& act, float* out, const float* inp, const WeightRef& w,
                      const float* bias, int N, int C, int OC);

}  // namespace engine
