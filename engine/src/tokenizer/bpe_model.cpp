// BPE merge loop (see bpe_model.h for the algorithm and its equivalence to the reference).
#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <string>

#include "tokenizer/byte_level.h"

namespace engine::tokenizer {

BpeModel::BpeModel(Vocabulary vocab, BpeOptions options)
    : m_vocab(std::move(vocab)), m_options(options), m_cache(std::make_unique<WordCache>()) {
  for (unsigned b = 0; b < 256; ++b) {
    const std::optional<int32_t> id = m_vocab.find(byte_to_piece_char(static_cast<uint8_t>(b)));
    m_byte_ids[b] = id ? *id : -1;
  }
}

void BpeModel::add_merge(int32_t left, int32_t right, int32_t result) {
  m_merges.insert_or_assign(pair_key(left, right), MergeRule{m_next_rank++, result});
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (m_options.ignore_merges) {
    std::string piece;
    bytes_to_piece(word, piece);
    if (std::optional<int32_t> id = m_vocab.find(piece)) {
      out.push_back(*id);
      return;
    }
  }
  const bool cacheable = WordCache::cacheable(word);
  if (cacheable && m_cache->lookup(word, out)) return;
  const std::size_t first = out.size();
  merge_word(word, out);
  if (cacheable) m_cache->store(word, std::span<const int32_t>(out.data() + first, out.size() - first));
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  // Symbols form a doubly linked list over a vector; a symbol absorbed into its left neighbour gets
  // id -1 and is unlinked. The left symbol of a merge always survives, so index 0 stays the head.
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  bool previous_was_unk = false;
  for (unsigned char b : word) {
    int32_t id = m_byte_ids[b];
    bool is_unk = false;
    if (id < 0) {
      if (!m_options.unk_id) continue;
      if (m_options.fuse_unk && previous_was_unk) continue;
      id = *m_options.unk_id;
      is_unk = true;
    }
    previous_was_unk = is_unk;
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, index + 1});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  // A candidate remembers the ids it was made for; if either symbol has changed since (merged into
  // something longer, or absorbed), the candidate is stale and skipped. Ids only ever grow into
  // longer tokens and a symbol's right link changes only when it absorbs that neighbour (which
  // changes its id), so the id check is exact.
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t left_id;
    int32_t right_id;
    int32_t result;
  };
  // Min-heap on (rank, pos): lowest rank first, leftmost among equal ranks.
  const auto after = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  std::vector<Candidate> heap;
  heap.reserve(symbols.size());
  auto candidate_at = [&](int32_t pos, bool push) {
    const int32_t right = symbols[static_cast<std::size_t>(pos)].next;
    if (right < 0) return;
    const int32_t left_id = symbols[static_cast<std::size_t>(pos)].id;
    const int32_t right_id = symbols[static_cast<std::size_t>(right)].id;
    auto it = m_merges.find(pair_key(left_id, right_id));
    if (it == m_merges.end()) return;
    heap.push_back({it->second.rank, pos, left_id, right_id, it->second.result});
    if (push) std::push_heap(heap.begin(), heap.end(), after);
  };
  for (int32_t pos = 0; pos + 1 < static_cast<int32_t>(symbols.size()); ++pos) candidate_at(pos, false);
  std::make_heap(heap.begin(), heap.end(), after);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const Candidate c = heap.back();
    heap.pop_back();
    Symbol& left = symbols[static_cast<std::size_t>(c.pos)];
    if (left.id != c.left_id || left.next < 0) continue;
    Symbol& right = symbols[static_cast<std::size_t>(left.next)];
    if (right.id != c.right_id) continue;
    left.id = c.result;
    left.next = right.next;
    if (left.next >= 0) symbols[static_cast<std::size_t>(left.next)].prev = c.pos;
    right.id = -1;
    if (left.prev >= 0) candidate_at(left.prev, true);
    candidate_at(c.pos, true);
  }

  for (int32_t pos = 0; pos >= 0; pos = symbols[static_cast<std::size_t>(pos)].next)
    out.push_back(symbols[static_cast<std::size_t>(pos)].id);
}

std::vector<std::pair<int32_t, int32_t>> BpeModel::merges_by_rank() const {
  std::vector<std::pair<int32_t, std::pair<int32_t, int32_t>>> ranked;
  ranked.reserve(m_merges.size());
  for (const auto& [key, rule] : m_merges)
    ranked.push_back({rule.rank, {static_cast<int32_t>(key >> 32), static_cast<int32_t>(key & 0xffffffffu)}});
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::pair<int32_t, int32_t>> out;
  out.reserve(ranked.size());
  for (const auto& r : ranked) out.push_back(r.second);
  return out;
}

}  // namespace engine::tokenizer
