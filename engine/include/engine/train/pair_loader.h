// Batches of preference pairs: P pairs per batch as B = 2P rows, the chosen replies in rows 0..P-1 and the
// rejected ones in rows P..2P-1 (pair i is rows i and P+i), as TRL's concatenated forward lays them out.
//
// Row r holds one encoded prompt + reply cut to its first T tokens (L = min(length, T)):
//   inputs[0..L) = ids[0..L), padding after; lengths[r] = L (the reward model scores position L-1);
//   targets[t] = ids[t+1] for reply tokens (t+1 >= reply_start, t+1 < L), else -1 -- so the sum of the
//   token log-probs of a row is the log-probability of its (kept part of the) reply given the prompt.
// A pair whose chosen or rejected reply has no token within T is dropped at construction (dropped() counts
// them); a pair with a reply cut short is kept (truncated() counts them). The order is an EpochOrder over the
// pairs kept, so resume works as for every BatchLoader.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/train/data_loader.h"
#include "engine/train/preference_data.h"

namespace engine {

class PairLoader : public BatchLoader {
 public:
  // P: pairs per batch. pad_id: the input after a short row (never a target). Throws engine::Error when
  // fewer than P pairs remain.
  PairLoader(std::vector<EncodedPair> pairs, int P, int T, bool shuffle, uint64_t seed, int32_t pad_id,
             const std::string& label);

  void next(Batch& batch) override;
  DataPosition position() const override { return m_order->position(); }
  void seek(const DataPosition& position) override { m_order->seek(position); }
  int batch_size() const override { return 2 * m_P; }
  int seq_len() const override { return m_T; }
  int pairs_per_batch() const { return m_P; }
  size_t size() const { return m_pairs.size(); }
  size_t dropped() const { return m_dropped; }
  size_t truncated() const { return m_truncated; }

 private:
  void fill_row(Batch& batch, int row, const EncodedReply& r) const;

  std::vector<EncodedPair> m_pairs;
  int m_P, m_T;
  int32_t m_pad;
  size_t m_dropped = 0, m_truncated = 0;
  std::optional<EpochOrder> m_order;
  std::vector<uint32_t> m_items;
};

}  // namespace engine
