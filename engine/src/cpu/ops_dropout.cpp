// CPU inverted dropout: one function for forward and backward, since both multiply by the same mask
// and scale (y = m x, dx = m dy); the mask is a pure function of (seed, index) (dropout_mask.h).
#include <cstring>

#include "cpu/cpu_ops.h"
#include "cpu/dropout_mask.h"

namespace engine::cpu {

void dropout_apply(ThreadPool& pool, float* out, const float* inp, int64_t n, float p, uint64_t seed) {
  if (p <= 0.0f) {
    if (out != inp) std::memmove(out, inp, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = inp[i] * dropout_scale(seed, static_cast<uint64_t>(i), p);
  });
}

}  // namespace engine::cpu
