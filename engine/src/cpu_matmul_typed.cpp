// CPU matmul for weights kept in their file encoding (f16, q8_0, q4_0, q4_K, q6_K; bf16 by the
// generic widening path, since the GGUF loader widens bf16 at load and it is rare here).
//
// Decode reads every weight byte once per token, so the cost is the bytes streamed: the int8
// kernels read 1.06 (q8_0) or 0.56 (q4_0) bytes per weight instead of 4. Threads own disjoint row
// ranges, so no two write the same output; ranges are multiples of 16 rows so their output
// cache lines do not bounce between cores either (also for prefill, where outputs are N rows of OC).
#include "cpu_matmul_typed.h"

#include <algorithm>
#include <cstdint>

#include "engine/error.h"

namespace engine {

namespace {

constexpr int64_t k_rows_per_unit = 16;

using ActKernel = void (*)(float*, const void*, const q8_act&, int64_t, int64_t);

ActKernel act_kernel(DType t) {
  switch (t) {
    case DType::Q8_0: return matvec_q8_0_act;
    case DType::Q4_0: return matvec_q4_0_act;
    case DType::Q4_K: return matvec_q4_K_act;
    case DType::Q6_K: return matvec_q6_K_act;
    default: return nullptr;
  }
}

void add_bias(float* out, const float* bias, int64_t n_rows, int64_t OC, int64_t b, int64_t e) {
  if (!bias) return;
  for (int64_t n = 0; n < n_rows; ++n) {
    float* o = out + n * OC;
    for (int64_t i = b; i < e; ++i) o[i] += bias[i];
  }
}

}  // namespace

void cpu_matmul_typed(ThreadPool& pool, q8_act& act, float* out, const float* inp, const WeightRef& w,
                      const float* bias, int N, int C, int OC) {
  if (N < 0 || C < 0 || OC < 0) throw Error("matmul_forward_typed: negative shape");
  if (!w.data) throw Error("matmul_forward_typed: weight has no data");
  if (N == 0 || OC == 0) return;
  const int64_t units = (OC + k_rows_per_unit - 1) / k_rows_per_unit;
  auto rows_of = [&](int64_t ub, int64_t ue) {
    return std::pair<int64_t, int64_t>{ub * k_rows_per_unit, std::min<int64_t>(ue * k_rows_per_unit, OC)};
  };
  if (N == 1) {
    if (ActKernel k = act_kernel(w.dtype)) {
      // One quantization of x serves every thread's rows.
      quantize_act_q8(inp, C, act);
      pool.parallel_for(units, [&](int64_t ub, int64_t ue) {
        const auto [b, e] = rows_of(ub, ue);
        k(out, w.data, act, b, e);
        add_bias(out, bias, 1, OC, b, e);
      });
      return;
    }
    if (w.dtype == DType::F16) {
      const auto* h = static_cast<const uint16_t*>(w.data);
      pool.parallel_for(units, [&](int64_t ub, int64_t ue) {
        const auto [b, e] = rows_of(ub, ue);
        matvec_f16(out, h, inp, C, b, e);
        add_bias(out, bias, 1, OC, b, e);
      });
      return;
    }
  }
  // One contiguous row range per thread: each widens its rows tile by tile (the tile stays in its
  // own cache) and runs sgemm on them.
  pool.parallel_for(units, [&](int64_t ub, int64_t ue) {
    const auto [b, e] = rows_of(ub, ue);
    matmul_typed(out, w.dtype, w.data, inp, N, C, OC, b, e);
    add_bias(out, bias, N, OC, b, e);
  }, /*chunks_per_thread=*/1);
}

}  // namespace engine
