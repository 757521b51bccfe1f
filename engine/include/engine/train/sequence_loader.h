// Batches of separate sequences (SFT conversations): one sequence per row, cut to T+1 tokens, padded.
//
// Row b of a batch holds sequence s: inputs = s.ids[0..T), targets = s.ids[1..T], and the target at t
// counts in the loss only when s.assistant_mask[t+1] is 1 (the model is taught to produce the assistant's
// tokens, never the user's or the template's); everything else, and the padding after a short
// sequence, has target -1. Sequences with no counted target inside their first T+1 tokens teach nothing
// and are dropped at construction (dropped() says how many). The order is an EpochOrder over the rest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/train/chat_dataset.h"
#include "engine/train/data_loader.h"

namespace engine {

class SequenceLoader : public BatchLoader {
 public:
  // pad_id: the input token put after a short sequence (its target is -1, so any valid id works).
  // Throws engine::Error when fewer than B sequences remain.
  SequenceLoader(std::vector<EncodedChat> sequences, int B, int T, bool shuffle, uint64_t seed, int32_t pad_id,
                 const std::string& label);

  void next(Batch& batch) override;
  DataPosition position() const override { return m_order->position(); }
  void seek(const DataPosition& position) override { m_order->seek(position); }
  int batch_size() const override { return m_B; }
  int seq_len() const override { return m_T; }
  size_t dropped() const { return m_dropped; }
  size_t size() const { return m_seqs.size(); }

 private:
  std::vector<EncodedChat> m_seqs;
  int m_B, m_T;
  int32_t m_pad;
  size_t m_dropped = 0;
  std::optional<EpochOrder> m_order;
  std::vector<uint32_t> m_items;
};

}  // namespace engine
