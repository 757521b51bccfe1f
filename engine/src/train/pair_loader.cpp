// Batches of preference pairs: see engine/train/pair_loader.h.
#include "engine/train/pair_loader.h"

#include <algorithm>

#include "engine/error.h"

namespace engine {

PairLoader::PairLoader(std::vector<EncodedPair> pairs, int P, int T, bool shuffle, uint64_t seed, int32_t pad_id,
                       const std::string& label)
    : m_P(P), m_T(T), m_pad(pad_id) {
  if (P < 1 || T < 2) throw Error(label + ": pairs per batch must be >= 1 and the sequence length >= 2");
  for (EncodedPair& p : pairs) {
    // A reply with no token inside the row teaches nothing (and a reward model would score the prompt).
    const bool fits = p.chosen.reply_start < size_t(T) && p.rejected.reply_start < size_t(T);
    if (!fits) {
      ++m_dropped;
      continue;
    }
    if (p.chosen.ids.size() > size_t(T) || p.rejected.ids.size() > size_t(T)) ++m_truncated;
    m_pairs.push_back(std::move(p));
  }
  if (m_pairs.size() < size_t(P))
    throw Error(label + ": " + std::to_string(m_pairs.size()) + " preference pair(s) have both replies start within " +
                std::to_string(T) + " tokens, fewer than the " + std::to_string(P) +
                " of one batch; use a longer --seq or a smaller --batch");
  m_order.emplace(m_pairs.size(), P, shuffle, seed, label);
}

void PairLoader::fill_row(Batch& batch, int row, const EncodedReply& r) const {
  const size_t L = std::min(r.ids.size(), size_t(m_T));
  int32_t* in = batch.inputs.data() + size_t(row) * m_T;
  int32_t* tg = batch.targets.data() + size_t(row) * m_T;
  for (size_t t = 0; t < L; ++t) {
    in[t] = r.ids[t];
    if (t + 1 < L && t + 1 >= r.reply_start) tg[t] = r.ids[t + 1];
  }
  batch.lengths[size_t(row)] = static_cast<int32_t>(L);
}

void PairLoader::next(Batch& batch) {
  const int B = 2 * m_P;
  const size_t BT = size_t(B) * size_t(m_T);
  batch.B = B;
  batch.T = m_T;
  batch.inputs.assign(BT, m_pad);
  batch.targets.assign(BT, -1);
  batch.weights.clear();
  batch.lengths.assign(size_t(B), 0);
  m_order->next(m_items);
  for (int i = 0; i < m_P; ++i) {
    const EncodedPair& p = m_pairs[m_items[size_t(i)]];
    fill_row(batch, i, p.chosen);
    fill_row(batch, m_P + i, p.rejected);
  }
}

}  // namespace engine
