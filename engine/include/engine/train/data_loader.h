// What the trainer asks of a data set: batches of B rows x T tokens, in an order that is a pure
// function of (seed, position), so a checkpoint that stores the position resumes the exact sequence.
//
// Invariants of every BatchLoader:
//   - next() fills inputs/targets/weights for B*T positions; a target of -1 (weight 0) marks padding;
//   - the order depends only on the constructor's arguments and the position: seek(position()) after
//     any number of next() calls, on a fresh loader, continues with the same batches;
//   - shuffling uses our own generator (splitmix64 + Fisher-Yates), never std:: distributions, whose
//     output differs between standard libraries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/train/train_model.h"

namespace engine {

struct Batch {
  int B = 0, T = 0;
  std::vector<int32_t> inputs;   // (B,T)
  std::vector<int32_t> targets;  // (B,T); -1 = no loss
  std::vector<float> weights;    // (B,T); empty = 1 wherever the target is >= 0
  std::vector<int32_t> lengths;  // (B): tokens of each row before its padding; empty when the loader does not say
  BatchView view() const {
    return BatchView{inputs.data(), targets.data(), weights.empty() ? nullptr : weights.data(), B, T};
  }
  // Positions that count in the loss (targets >= 0 with non-zero weight).
  int64_t counted_positions() const;
  // The sum of the loss weights of those positions (= counted_positions() when there are no weights): the
  // denominator of TrainModel's loss over this batch.
  double counted_weight() const;
};

// Rows [first, first + count) of `from` into `to` (inputs, targets, weights and lengths, as `from` has them).
// Data parallelism: rank r of N takes rows [r*B/N, (r+1)*B/N) of every global batch.
void take_rows(const Batch& from, int first, int count, Batch& to);

// Where a loader stands: `epoch` passes over the data so far and `cursor` within the current one
// (a token offset in order, an index into the epoch's permutation when shuffled).
struct DataPosition {
  uint64_t epoch = 0;
  uint64_t cursor = 0;
  bool operator==(const DataPosition&) const = default;
};

class BatchLoader {
 public:
  virtual ~BatchLoader() = default;
  virtual void next(Batch& batch) = 0;
  virtual DataPosition position() const = 0;
  // Throws engine::Error when the position cannot belong to this data (cursor past the end).
  virtual void seek(const DataPosition& position) = 0;
  virtual int batch_size() const = 0;
  virtual int seq_len() const = 0;
};

// The order in which a loader visits `units` items (windows, conversations), `per_batch` at a time:
// 0, 1, 2, ... in order, or each epoch's permutation when shuffled. A batch never straddles two
// epochs: when fewer than per_batch items are left the epoch ends and the remainder is skipped.
class EpochOrder {
 public:
  // Throws engine::Error when units < per_batch.
  EpochOrder(uint64_t units, int per_batch, bool shuffle, uint64_t seed, const std::string& label);
  // The next batch's items; advances the position.
  void next(std::vector<uint32_t>& items);
  const DataPosition& position() const { return m_pos; }
  // Throws engine::Error when the cursor cannot belong to this order.
  void seek(const DataPosition& position);

 private:
  uint32_t m_units;
  int m_per_batch;
  bool m_shuffle;
  uint64_t m_seed;
  std::vector<uint32_t> m_perm;        // this epoch's permutation (shuffled)
  uint64_t m_perm_epoch = UINT64_MAX;  // epoch m_perm was drawn for
  DataPosition m_pos;
};

// splitmix64: the shuffle generator (a fixed, portable sequence for a given state).
uint64_t splitmix64_next(uint64_t& state);

// A permutation of 0..n-1 for (seed, epoch): Fisher-Yates driven by splitmix64, unbiased bounded draws.
std::vector<uint32_t> epoch_permutation(uint32_t n, uint64_t seed, uint64_t epoch);

}  // namespace engine
