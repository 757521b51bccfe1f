// Global-norm gradient clipping over all trainable tensors (torch.nn.utils.clip_grad_norm_ with norm 2):
//
//   norm = sqrt(sum over every gradient value g of g^2)       (accumulated in double)
//   if norm > max_norm: every gradient *= max_norm / (norm + 1e-6)
//
// A non-finite gradient makes the norm non-finite; then nothing is scaled and the report names the
// first tensor holding a NaN or infinity, so the trainer can refuse the step with a clear message.
#pragma once

#include <span>
#include <string>

#include "engine/backend.h"
#include "engine/train/adamw.h"
#include "engine/train/train_model.h"

namespace engine {

class Communicator;

struct GradNormReport {
  double norm = 0;  // before clipping; NaN or inf when some gradient is
  bool finite = true;
  std::string first_bad;  // name of the first tensor with a non-finite gradient ("" when finite)
};

// The global L2 norm of the gradients, without changing them. Computed on `backend` (where the gradients
// live; the CPU backend splits it over its threads), or on the host in one thread when it is null.
GradNormReport grad_global_norm(std::span<const TrainableTensor> tensors, Backend* backend = nullptr);

// Computes the norm and, when it is finite and above max_norm (> 0), scales the gradients down to it.
// max_norm <= 0 disables clipping (the norm is still computed and reported).
GradNormReport clip_grad_norm(std::span<const TrainableTensor> tensors, float max_norm, Backend* backend = nullptr);

// The same for a sharded run (ZeRO, engine/train/zero_shard.h), collective: each rank holds the global gradient only
// on `shard` of the flattened tensors. The norm is the square root of the sum over the ranks of their shard's sums of
// squares (one all-reduce of a double): the global norm, up to the order of the double additions. The clip scales
// the shard only. When the norm is not finite (on every rank alike) a second all-reduce, of one flag per tensor,
// names the first tensor with a non-finite gradient on whichever rank holds it.
GradNormReport clip_grad_norm_sharded(std::span<const TrainableTensor> tensors, FlatRange shard, float max_norm,
                                      Communicator& comm, Backend* backend = nullptr);

}  // namespace engine
