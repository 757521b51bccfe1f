// AdamW exactly as PyTorch's torch.optim.AdamW defines it (amsgrad off, maximize off):
//
//   for step t = 1, 2, ... and each parameter p with gradient g:
//     p  = p * (1 - lr * wd)                         (decoupled weight decay; wd = 0 for tensors that opt out)
//     m  = b1 * m + (1 - b1) * g
//     v  = b2 * v + (1 - b2) * g * g
//     p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//
// with m = v = 0 before the first step. Decay applies only to TrainableTensors whose weight_decay flag
// is set (matrices: >= 2 dims per layer), never to biases and norm gains -- the grouping nanoGPT and
// most recipes use. The learning rate is passed per step so a schedule can drive it.
//
// Invariants: m and v have one float per trainable value, in the order of the TrainableTensor list
// given at construction; step_count() is the t of the last step taken (0 before any), so a checkpoint
// that stores m, v and t resumes bias correction exactly.
//
// Sharded (ZeRO stage 1, engine/train/zero_shard.h): given a range [begin, end) of the flattened trainable values
// (tensor 0's values first, then tensor 1's, ...), the optimizer holds m and v for that range only and step()
// updates only the values in it -- each from its gradient, which must then be the global one there. first_moment(i)
// is then the part of tensor i inside the range (possibly empty), starting at value moment_offset(i) of the tensor.
// The rule is elementwise, so a value's update does not depend on which range it falls in: the shards of N ranks
// together take exactly the step one unsharded optimizer takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/train/train_model.h"

namespace engine {

// Hyper-parameters in double, as PyTorch holds them (Python floats): 1 - beta1 is then the same float
// in both (0.1f, where 1 - 0.9f would be 0.100000024f).
// A range [begin, end) of the flattened trainable values.
struct FlatRange {
  uint64_t begin = 0, end = 0;
  uint64_t size() const { return end - begin; }
  bool operator==(const FlatRange&) const = default;
};
// Every value, however many there are: the unsharded optimizer's range.
inline constexpr FlatRange kAllValues{0, UINT64_MAX};

struct AdamWParams {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

class AdamW {
 public:
  // Throws engine::Error for out-of-range hyper-parameters (betas outside [0,1), eps <= 0, wd < 0).
  // The update runs on `backend` (where the tensors live: the CPU backend splits it over its threads), or
  // on the host in one thread when it is null; both give the same floats (engine/backend.h AdamWStep).
  AdamW(std::vector<TrainableTensor> tensors, const AdamWParams& params, Backend* backend = nullptr);
  // Sharded: state and updates for the flat values in `shard` only (engine::Error when it is not inside them);
  // kAllValues: all of them, as the constructor above.
  AdamW(std::vector<TrainableTensor> tensors, const AdamWParams& params, Backend* backend, FlatRange shard);

  // Applies one update to every tensor with learning rate `lr`, then t += 1.
  void step(float lr);

  int64_t step_count() const { return m_t; }
  const AdamWParams& params() const { return m_params; }
  const std::vector<TrainableTensor>& tensors() const { return m_tensors; }

  // The flat values this optimizer updates (all of them unless sharded), and whether that is fewer than all.
  FlatRange shard() const { return m_shard; }
  bool sharded() const { return m_shard.size() != m_total; }
  uint64_t total_values() const { return m_total; }
  // Bytes of m and v held here.
  uint64_t state_bytes() const { return 2 * m_shard.size() * sizeof(float); }

  // Optimizer state for checkpoints: first and second moments of tensor i (numel floats each; sharded: the
  // tensor's values inside the shard, from value moment_offset(i) of the tensor).
  std::vector<float>& first_moment(size_t i) { return m_m[i]; }
  std::vector<float>& second_moment(size_t i) { return m_v[i]; }
  const std::vector<float>& first_moment(size_t i) const { return m_m[i]; }
  const std::vector<float>& second_moment(size_t i) const { return m_v[i]; }
  void set_step_count(int64_t t);
  uint64_t moment_offset(size_t i) const { return m_lo[i]; }

 private:
  std::vector<TrainableTensor> m_tensors;
  AdamWParams m_params;
  Backend* m_backend = nullptr;
  std::vector<std::vector<float>> m_m, m_v;
  std::vector<uint64_t> m_lo;  // per tensor: its first value held here (an index into the tensor)
  uint64_t m_total = 0;        // values of all tensors together
  FlatRange m_shard;
  int64_t m_t = 0;
};

}  // namespace engine
