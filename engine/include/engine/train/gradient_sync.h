// Data parallelism's one exchange per optimizer update: the gradients of every rank summed in place, so each rank
// then holds the gradient of the global batch and takes the same AdamW step (the weights never diverge).
//
// The trainable tensors' gradient buffers are cut into buckets of at most bucket_bytes (PyTorch DDP's 25 MB by
// default): neighbours that lie back to back in memory (the f32 gradient arena, the LoRA adapters' buffer) share a
// bucket, a tensor larger than a bucket is split. Buckets are planned from the last tensor to the first -- the order
// in which the backward pass finishes them -- and all are in flight at once, so the transfer of one overlaps the
// reduction of the next. The exchange runs after the backward pass: on the CPU backend the backward keeps every
// core busy and MPI's shared-memory transport makes progress only inside MPI calls, so starting buckets during the
// backward would not overlap anything (a GPU backend with its own stream can; the communicator's start/wait calls
// are what it needs).
//
// The gradients are summed, not averaged: the trainer scales each rank's contribution by its share of the global
// batch's counted tokens before the backward (engine/train/trainer.h), which is what makes N ranks x B/N rows equal
// one rank x B rows also when ranks count different numbers of tokens (SFT's masks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/train/train_model.h"

namespace engine {

class Communicator;

class GradientSync {
 public:
  static constexpr size_t kDefaultBucketBytes = size_t(25) << 20;

  // The tensors' gradient buffers must stay where they are while this exists (the optimizer holds the same list).
  GradientSync(Communicator& comm, const std::vector<TrainableTensor>& tensors,
               size_t bucket_bytes = kDefaultBucketBytes);

  // Sums every bucket over all ranks (collective). A barrier first separates the two costs: the time this rank
  // waits there for the slowest one is added to wait_seconds(), the exchange itself to seconds().
  void all_reduce();

  size_t bucket_count() const { return m_buckets.size(); }
  uint64_t bytes_per_reduce() const { return m_bytes; }  // gradient bytes each rank contributes per all_reduce
  double seconds() const { return m_seconds; }           // time exchanging gradients since the last reset
  double wait_seconds() const { return m_wait_seconds; }  // time waiting for slower ranks since the last reset
  void reset_seconds() { m_seconds = m_wait_seconds = 0; }

 private:
  struct Bucket {
    float* data;
    size_t n;
  };
  Communicator& m_comm;
  std::vector<Bucket> m_buckets;
  uint64_t m_bytes = 0;
  double m_seconds = 0, m_wait_seconds = 0;
};

}  // namespace engine
