// q4_1 / q5_0 / q5_1 / q5_K weights (file layout) x int8 activations: out[o] = dot(W[o], x).
//
// Per 32-weight block (a q5_K sub-block lines up with one activation block as well) the integer sum
// s = sum(q*xq) of the unsigned values q, then the block's affine terms in f32, with sum(xq) from
// quantize_act_q8:
//   q5_0:        dx * d * (s - 16*sum(xq))               (the offset subtracted exactly, in int32)
//   q4_1 / q5_1: dx * (d*s + m*sum(xq))
//   q5_K:        dx * (d*sc*s - dmin*m*sum(xq))          (as matvec_q4_K.cpp)
// Plain loops: the loader's x8 copies (matmul_x8_*) carry decode and prefill; these serve the last
// OC % 8 rows of a matrix and weights loaded without the copy.
#include <type_traits>

#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

namespace {

int32_t dot_u8_s8(const uint8_t* u, const int8_t* x, int n) {
  int32_t s = 0;
  for (int j = 0; j < n; ++j) s += int32_t{u[j]} * x[j];
  return s;
}

template <typename Block>
void matvec_32(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end, const char* what) {
  require_multiple(x.C, k_qblock, what);
  const int nb = x.C / k_qblock;
  const auto* rows = static_cast<const Block*>(W);
  uint8_t u[k_qblock];
  for (int64_t o = row_begin; o < row_end; ++o) {
    const Block* w = rows + o * nb;
    float acc = 0.f;
    for (int b = 0; b < nb; ++b) {
      uint32_t high = 0;
      if constexpr (!std::is_same_v<Block, block_q4_1>) high = q5_high_bits(w[b].qh);
      q5_unsigned_values(w[b].qs, high, u);
      const int32_t s = dot_u8_s8(u, x.q.data() + static_cast<size_t>(b) * k_qblock, k_qblock);
      const float d = half_to_f32(w[b].d);
      if constexpr (std::is_same_v<Block, block_q5_0>) {
        acc += x.d[b] * (d * static_cast<float>(s - 16 * x.sum[b]));
      } else {
        acc += x.d[b] * (d * static_cast<float>(s) + half_to_f32(w[b].m) * static_cast<float>(x.sum[b]));
      }
    }
    out[o] = acc;
  }
}

}  // namespace

void matvec_q4_1_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  matvec_32<block_q4_1>(out, W, x, row_begin, row_end, "matvec_q4_1");
}

void matvec_q5_0_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  matvec_32<block_q5_0>(out, W, x, row_begin, row_end, "matvec_q5_0");
}

void matvec_q5_1_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  matvec_32<block_q5_1>(out, W, x, row_begin, row_end, "matvec_q5_1");
}

void matvec_q5_K_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end) {
  require_multiple(x.C, k_kblock, "matvec_q5_K");
  const int nsb = x.C / k_kblock;
  const auto* rows = static_cast<const block_q5_K*>(W);
  uint8_t u[k_kblock];
  for (int64_t o = row_begin; o < row_end; ++o) {
    const block_q5_K* w = rows + o * nsb;
    float acc = 0.f;
    for (int s = 0; s < nsb; ++s) {
      q5_K_unsigned_values(w[s], u);
      const float d = half_to_f32(w[s].d), dmin = half_to_f32(w[s].dmin);
      for (int j = 0; j < 8; ++j) {
        const int b = 8 * s + j;
        const int32_t sum = dot_u8_s8(u + 32 * j, x.q.data() + static_cast<size_t>(b) * k_qblock, k_qblock);
        int sc, m;
        q4_K_scale_min(w[s].scales, j, sc, m);
        acc += x.d[b] * (d * static_cast<float>(sc * sum) - dmin * static_cast<float>(m * x.sum[b]));
      }
    }
    out[o] = acc;
  }
}

}  // namespace engine
