// Global-norm gradient clipping: see engine/train/grad_clip.h.
#include "engine/train/grad_clip.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/dist/communicator.h"

namespace engine {

GradNormReport grad_global_norm(std::span<const TrainableTensor> tensors, Backend* backend) {
  GradNormReport r;
  double sum = 0.0;
  for (const TrainableTensor& t : tensors) {
    const auto n = static_cast<int64_t>(t.numel);
    const double s = backend ? backend->sum_squares(t.grad, n) : sum_squares_host(t.grad, n);
    // A NaN anywhere propagates into s; an infinity makes s infinite. Either way the tensor is named.
    if (!std::isfinite(s) && r.finite) {
      r.finite = false;
      r.first_bad = t.name;
    }
    sum += s;
  }
  // Squares of finite floats (< 1.2e77) cannot overflow a double sum, so finite grads give a finite norm.
  r.norm = std::sqrt(sum);
  return r;
}

GradNormReport clip_grad_norm(std::span<const TrainableTensor> tensors, float max_norm, Backend* backend) {
  GradNormReport r = grad_global_norm(tensors, backend);
  if (!r.finite || max_norm <= 0.0f || r.norm <= double(max_norm)) return r;
  const float coef = static_cast<float>(double(max_norm) / (r.norm + 1e-6));
  for (const TrainableTensor& t : tensors) {
    const auto n = static_cast<int64_t>(t.numel);
    if (backend) {
      backend->scale(t.grad, coef, n);
    } else {
      for (int64_t i = 0; i < n; ++i) t.grad[i] *= coef;
    }
  }
  return r;
}

namespace {

// The part of tensor `t` (at flat `offset`) inside `shard`, as [first, first + n) of the tensor.
struct Part {
  int64_t first = 0, n = 0;
};
Part part_of(const TrainableTensor& t, uint64_t offset, FlatRange shard) {
  const uint64_t lo = std::clamp(shard.begin, offset, offset + t.numel);
  const uint64_t hi = std::clamp(shard.end, offset, offset + t.numel);
  return {int64_t(lo - offset), int64_t(hi - lo)};
}

}  // namespace

GradNormReport clip_grad_norm_sharded(std::span<const TrainableTensor> tensors, FlatRange shard, float max_norm,
                                      Communicator& comm, Backend* backend) {
  GradNormReport r;
  double sum = 0.0;
  std::vector<double> bad(tensors.size(), 0.0);
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Part p = part_of(tensors[i], offset, shard);
    offset += tensors[i].numel;
    if (p.n == 0) continue;
    const float* g = tensors[i].grad + p.first;
    const double s = backend ? backend->sum_squares(g, p.n) : sum_squares_host(g, p.n);
    if (!std::isfinite(s)) bad[i] = 1.0;
    sum += s;
  }
  comm.allreduce_sum(&sum, 1);
  r.norm = std::sqrt(sum);
  if (!std::isfinite(r.norm)) {
    r.finite = false;
    comm.allreduce_sum(bad.data(), bad.size());
    for (size_t i = 0; i < tensors.size() && r.first_bad.empty(); ++i)
      if (bad[i] != 0.0) r.first_bad = tensors[i].name;
    return r;
  }
  if (max_norm <= 0.0f || r.norm <= double(max_norm)) return r;
  const float coef = static_cast<float>(double(max_norm) / (r.norm + 1e-6));
  offset = 0;
  for (const TrainableTensor& t : tensors) {
    const Part p = part_of(t, offset, shard);
    offset += t.numel;
    if (p.n == 0) continue;
    if (backend) {
      backend->scale(t.grad + p.first, coef, p.n);
    } else {
      for (int64_t k = 0; k < p.n; ++k) t.grad[p.first + k] *= coef;
    }
  }
  return r;
}

}  // namespace engine
