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
#include "quant/dtype_traits.h"

namespace engine {

namespace {

constexpr int64_t k_rows_per_unit = 16;

void add_bias(float* out, const float* bias, int64_t n_rows, int64_t OC, int64_t b, int64_t e) {
  if (!bias) return;
  for (int64_t n = 0; n < n_rows; ++n) {
    float* o = out + n * OC;
    for (int64_t i = b; i < e; ++i) o[i] += bias[i];
  }
}

// Weights with an x8 copy: X is rounded to int8 once (all N rows), threads take whole 16-row
// units of the packed groups, and the last OC % 8 rows (only the vocabulary of some heads) come
// from the file layout: the int8 matvec per token, so every row sees the same rounded activations.
void matmul_x8_rows(ThreadPool& pool, q8_act& act, float* out, const float* inp, const WeightRef& w, const float* bias,
                    int N, int C, int OC) {
  if (N == 1) {
    quantize_act_q8(inp, C, act);
  } else {
    // Every token's activations, quantized by the pool too (a prefill's worth is not negligible).
    resize_act_q8(N, C, act);
    const int64_t nb = C / k_qblock;
    pool.parallel_for(N, [&](int64_t nb0, int64_t ne) {
      quantize_act_blocks(inp + nb0 * C, (ne - nb0) * nb, act.q.data() + nb0 * C, act.d.data() + nb0 * nb,
                          act.sum.data() + nb0 * nb);
    });
  }
  // Once per product: done inside matmul_x8, q6_K's activation copy was made again by every chunk
  // of every thread (11 % of a prefill).
  prepare_act_x8(w.dtype, act);
  const int64_t groups = OC / k_x8_rows;
  constexpr int64_t k_groups_per_unit = k_rows_per_unit / k_x8_rows;
  const int64_t units = (groups + k_groups_per_unit - 1) / k_groups_per_unit;
  pool.parallel_for(
      units,
      [&](int64_t ub, int64_t ue) {
        const int64_t gb = ub * k_groups_per_unit, ge = std::min(ue * k_groups_per_unit, groups);
        matmul_x8(w.dtype, out, w.packed, act, N, OC, gb, ge);
        add_bias(out, bias, N, OC, gb * k_x8_rows, ge * k_x8_rows);
      },
      /*chunks_per_thread=*/4);
  const int64_t tail = groups * k_x8_rows;
  if (tail == OC) return;
  thread_local q8_act one;
  const quant_detail::ActMatvecFn k = quant_detail::dtype_traits(w.dtype).matvec_act;
  const int nb = C / k_qblock;
  if (N == 1) {  // decode: act already is the one token (no copy on the per-token path)
    k(out, w.data, act, tail, OC);
    add_bias(out, bias, 1, OC, tail, OC);
    return;
  }
  for (int n = 0; n < N; ++n) {
    one.C = C;
    one.q.assign(act.q.begin() + static_cast<int64_t>(n) * C, act.q.begin() + static_cast<int64_t>(n + 1) * C);
    one.d.assign(act.d.begin() + static_cast<int64_t>(n) * nb, act.d.begin() + static_cast<int64_t>(n + 1) * nb);
    one.sum.assign(act.sum.begin() + static_cast<int64_t>(n) * nb, act.sum.begin() + static_cast<int64_t>(n + 1) * nb);
    float* row = out + static_cast<int64_t>(n) * OC;
    k(row, w.data, one, tail, OC);
  }
  add_bias(out, bias, N, OC, tail, OC);
}

// Weights with column panels (f16): threads take whole panels (16 rows), X stays f32; the last
// OC % 16 rows come from the row layout, one token at a time.
void matmul_panel_rows(ThreadPool& pool, float* out, const float* inp, const WeightRef& w,
                       const quant_detail::PanelTraits& panel, const float* bias, int N, int C, int OC) {
  const int64_t panels = OC / k_panel_rows;
  pool.parallel_for(
      panels,
      [&](int64_t pb, int64_t pe) {
        panel.matmul(out, w.packed, inp, N, C, OC, pb, pe);
        add_bias(out, bias, N, OC, pb * k_panel_rows, pe * k_panel_rows);
      },
      /*chunks_per_thread=*/4);
  const int64_t tail = panels * k_panel_rows;
  if (tail == OC) return;
  for (int n = 0; n < N; ++n)
    panel.matvec_rows(out + static_cast<int64_t>(n) * OC, w.data, inp + static_cast<int64_t>(n) * C, C, tail, OC);
  add_bias(out, bias, N, OC, tail, OC);
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
  const quant_detail::DTypeTraits& traits = quant_detail::dtype_traits(w.dtype);
  if (w.packed && traits.x8) {
    matmul_x8_rows(pool, act, out, inp, w, bias, N, C, OC);
    return;
  }
  if (w.packed && traits.panels) {
    matmul_panel_rows(pool, out, inp, w, *traits.panels, bias, N, C, OC);
    return;
  }
  if (N == 1) {
    if (const quant_detail::ActMatvecFn k = traits.matvec_act) {
      // One quantization of x serves every thread's rows.
      quantize_act_q8(inp, C, act);
      pool.parallel_for(units, [&](int64_t ub, int64_t ue) {
        const auto [b, e] = rows_of(ub, ue);
        k(out, w.data, act, b, e);
        add_bias(out, bias, 1, OC, b, e);
      });
      return;
    }
    if (const quant_detail::FloatMatvecFn k = traits.matvec_float) {
      pool.parallel_for(units, [&](int64_t ub, int64_t ue) {
        const auto [b, e] = rows_of(ub, ue);
        k(out, w.data, inp, C, b, e);
        add_bias(out, bias, 1, OC, b, e);
      });
      return;
    }
  }
  // One contiguous row range per thread: each widens its rows tile by tile (the tile stays in its
  // own cache) and runs sgemm on them.
  pool.parallel_for(
      units,
      [&](int64_t ub, int64_t ue) {
        const auto [b, e] = rows_of(ub, ue);
        matmul_typed(out, w.dtype, w.data, inp, N, C, OC, b, e);
        add_bias(out, bias, N, OC, b, e);
      },
      /*chunks_per_thread=*/1);
}

}  // namespace engine
