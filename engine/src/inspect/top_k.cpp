// top_k_indices / log_sum_exp (see engine/inspect/top_k.h). A bounded min-heap keeps the scan
// O(n log k): the lens ranks (L+1)*T rows of a 50k-150k vocabulary, where a full sort would dominate.
#include "engine/inspect/top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine {

namespace {

float key(float v) { return std::isnan(v) ? -std::numeric_limits<float>::infinity() : v; }

}  // namespace

std::vector<int32_t> top_k_indices(std::span<const float> values, int k) {
  const int n = static_cast<int>(values.size());
  k = std::clamp(k, 0, n);
  std::vector<int32_t> heap;
  if (k == 0) return heap;
  heap.reserve(static_cast<size_t>(k));
  // "a ranks before b": larger value, then smaller id.
  auto before = [&](int32_t a, int32_t b) {
    const float va = key(values[a]), vb = key(values[b]);
    return va > vb || (va == vb && a < b);
  };
  // With `before` as the comparison, std heap functions keep the WORST kept element at the front.
  for (int32_t i = 0; i < n; ++i) {
    if (static_cast<int>(heap.size()) < k) {
      heap.push_back(i);
      std::push_heap(heap.begin(), heap.end(), before);
    } else if (before(i, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), before);
      heap.back() = i;
      std::push_heap(heap.begin(), heap.end(), before);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), before);
  return heap;
}

double log_sum_exp(std::span<const float> logits) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double m = -inf;
  for (const float l : logits)
    if (!std::isnan(l)) m = std::max(m, static_cast<double>(l));
  if (m == -inf || m == inf) return m;
  double sum = 0.0;
  for (const float l : logits)
    if (!std::isnan(l)) sum += std::exp(static_cast<double>(l) - m);
  return m + std::log(sum);
}

}  // namespace engine
