// The optimizer's whole-buffer ops on the CPU: AdamW, the gradient norm's sum of squares, scaling and
// zeroing, split over the pool. Each touches every trainable value once per step (GPT-2 124M: AdamW
// reads and writes 3.5 GB), so they are bound by memory bandwidth, which one thread alone does not use up.
#include <algorithm>
#include <vector>

#include "cpu/cpu_ops.h"
#include "engine/backend.h"

namespace engine::cpu {
namespace {

// Elements per task: large enough that a task costs far more than handing it out, and a multiple of 16
// so that no two threads write the same cache line.
constexpr int64_t kElementsPerBlock = int64_t(1) << 16;

template <typename Fn>
void for_element_blocks(ThreadPool& pool, int64_t n, Fn&& fn) {
  const int64_t blocks = (n + kElementsPerBlock - 1) / kElementsPerBlock;
  pool.parallel_for(blocks, [&](int64_t b0, int64_t b1) {
    fn(b0 * kElementsPerBlock, std::min(b1 * kElementsPerBlock, n));
  });
}

}  // namespace

void adamw_update(ThreadPool& pool, float* params, const float* grads, float* m, float* v, int64_t n,
                  const AdamWStep& s) {
  for_element_blocks(pool, n, [&](int64_t i0, int64_t i1) {
    adamw_update_host(params + i0, grads + i0, m + i0, v + i0, i1 - i0, s);
  });
}

double sum_squares(ThreadPool& pool, const float* p, int64_t n) {
  // One partial sum per fixed block, added in block order: the result does not depend on the thread count.
  const int64_t blocks = (n + kElementsPerBlock - 1) / kElementsPerBlock;
  std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
  pool.parallel_for(blocks, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i0 = b * kElementsPerBlock, i1 = std::min(i0 + kElementsPerBlock, n);
      partial[static_cast<size_t>(b)] = sum_squares_host(p + i0, i1 - i0);
    }
  });
  double sum = 0;
  for (double s : partial) sum += s;
  return sum;
}

void scale(ThreadPool& pool, float* p, float a, int64_t n) {
  for_element_blocks(pool, n, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) p[i] *= a;
  });
}

void fill_zero(ThreadPool& pool, float* p, int64_t n) {
  for_element_blocks(pool, n, [&](int64_t i0, int64_t i1) { std::fill(p + i0, p + i1, 0.0f); });
}

}  // namespace engine::cpu
