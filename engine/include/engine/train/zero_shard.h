// ZeRO stage 1 (Rajbhandari et al., 2020): the AdamW state of a data-parallel run split between the ranks instead of
// copied on each. The trainable values are seen as one flat array (tensor 0's values, then tensor 1's, ...; the
// optimizer's list); rank r owns the contiguous range shard_bounds()[r] .. [r + 1] of it and keeps m and v for that
// range only (engine/train/adamw.h, sharded), so each rank holds 1/N of the optimizer state.
//
// One update, instead of the all-reduce of engine/train/gradient_sync.h:
//   1. reduce_scatter_gradients(): the gradients summed over the ranks, each rank receiving the sum of its own
//      range only (half the traffic of an all-reduce); the rest of its gradient buffer is then stale;
//   2. the global gradient norm from each rank's sum of squares over its range (one all-reduce of a scalar,
//      engine/train/grad_clip.h) and the clip applied to the range;
//   3. each rank's AdamW step on its range;
//   4. all_gather_values(): every rank's updated range sent to all, so every rank again holds all the weights.
// Every rank ends the update with the weights an unsharded run computes: the sums are the same sums, AdamW is
// elementwise, and the clip coefficient comes from the same global norm.
//
// Ranges are balanced (each within kShardAlign values of total / world) and start on multiples of kShardAlign values
// (64 bytes into the flat space: where the tensors lie back to back in an aligned arena, each rank's part starts on a
// cache line, as the vector loops of its update like). The exchanges run over pieces of at most bucket_bytes
// that lie back to back in memory (the f32 arena, the LoRA adapters' buffer), as GradientSync's buckets, so no MPI
// count exceeds an int; a piece that straddles two ranks' ranges gives each its part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/train/adamw.h"
#include "engine/train/train_model.h"

namespace engine {

class Communicator;

// Values per alignment unit of a shard boundary.
inline constexpr uint64_t kShardAlign = 16;

// The world + 1 boundaries of the ranks' ranges over `total` values: 0 = b[0] <= b[1] <= ... <= b[world] = total,
// every inner boundary a multiple of kShardAlign, each range within kShardAlign of total / world.
std::vector<uint64_t> shard_bounds(uint64_t total, int world);

class ZeroShard {
 public:
  static constexpr size_t kDefaultBucketBytes = size_t(25) << 20;

  // The tensors' value and gradient buffers must stay where they are while this exists (the optimizer holds the
  // same list).
  ZeroShard(Communicator& comm, const std::vector<TrainableTensor>& tensors, size_t bucket_bytes = kDefaultBucketBytes);

  // This rank's range of the flat values (give it to AdamW's sharded constructor).
  FlatRange shard() const;
  const std::vector<uint64_t>& bounds() const { return m_bounds; }

  // Collective: this rank's range of every gradient becomes the sum over the ranks; its other values are stale.
  void reduce_scatter_gradients();
  // Collective: every rank's range of the values, as that rank holds it, copied to all ranks.
  void all_gather_values();

  // Collective: the whole state of the sharded optimizer `opt` (every rank's), as an unsharded optimizer over the same
  // tensors with the same step count, on `root`; the other ranks return null. Memory: the whole state on the root,
  // one tensor's worth on the others, for the moment of the call (a checkpoint).
  std::unique_ptr<AdamW> gather_optimizer(const AdamW& opt, int root = 0);

  uint64_t bytes_per_update() const { return m_bytes; }  // gradient bytes each rank sends into the reduce-scatter
  size_t piece_count() const { return m_grad_pieces.size(); }
  double seconds() const { return m_seconds; }            // exchanging since the last reset
  double wait_seconds() const { return m_wait_seconds; }  // waiting for slower ranks since the last reset
  void reset_seconds() { m_seconds = m_wait_seconds = 0; }

 private:
  struct Piece {
    float* data;
    std::vector<size_t> counts;  // per rank: the values of its range in this piece
  };
  std::vector<Piece> plan(bool gradients, size_t cap) const;
  std::vector<size_t> counts_of(uint64_t begin, uint64_t n) const;

  Communicator& m_comm;
  std::vector<TrainableTensor> m_tensors;
  std::vector<uint64_t> m_bounds;
  std::vector<Piece> m_grad_pieces, m_value_pieces;
  uint64_t m_bytes = 0;
  double m_seconds = 0, m_wait_seconds = 0;
};

}  // namespace engine
