// Global-norm gradient clipping: see engine/train/grad_clip.h.
#include "engine/train/grad_clip.h"

#include <cmath>

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

}  // namespace engine
