// SFT batches from separate sequences: see engine/train/sequence_loader.h.
#include "engine/train/sequence_loader.h"

#include <algorithm>

#include "engine/error.h"

namespace engine {

SequenceLoader::SequenceLoader(std::vector<EncodedChat> sequences, int B, int T, bool shuffle, uint64_t seed,
                               int32_t pad_id, const std::string& label)
    : m_B(B), m_T(T), m_pad(pad_id) {
  if (B < 1 || T < 1) throw Error(label + ": batch size and sequence length must be >= 1");
  for (EncodedChat& s : sequences) {
    if (s.assistant_mask.size() != s.ids.size()) throw Error(label + ": internal error: mask and ids differ in length");
    const size_t end = std::min(s.ids.size(), size_t(T) + 1);
    bool teaches = false;
    for (size_t t = 1; t < end && !teaches; ++t) teaches = s.assistant_mask[t] != 0;
    if (teaches) m_seqs.push_back(std::move(s));
    else ++m_dropped;
  }
  if (m_seqs.empty())
    throw Error(label + ": no conversation has an assistant token within the first " + std::to_string(T) +
                " tokens; use a longer --seq");
  m_order.emplace(m_seqs.size(), B, shuffle, seed, label);
}

void SequenceLoader::next(Batch& batch) {
  const size_t BT = size_t(m_B) * size_t(m_T);
  batch.B = m_B;
  batch.T = m_T;
  batch.inputs.assign(BT, m_pad);
  batch.targets.assign(BT, -1);
  batch.weights.clear();
  m_order->next(m_items);
  for (int b = 0; b < m_B; ++b) {
    const EncodedChat& s = m_seqs[m_items[size_t(b)]];
    const size_t n = std::min(s.ids.size(), size_t(m_T) + 1);
    int32_t* in = batch.inputs.data() + size_t(b) * m_T;
    int32_t* tg = batch.targets.data() + size_t(b) * m_T;
    for (size_t t = 0; t + 1 < n; ++t) {
      in[t] = s.ids[t];
      if (s.assistant_mask[t + 1]) tg[t] = s.ids[t + 1];
    }
  }
}

}  // namespace engine
