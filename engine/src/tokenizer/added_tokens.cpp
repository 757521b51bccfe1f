// Byte trie for added-token matching (see added_tokens.h).
#include "tokenizer/added_tokens.h"

#include <algorithm>

namespace engine::tokenizer {

int32_t AddedTokenMatcher::child(int32_t node, unsigned char byte) const {
  const auto& kids = m_nodes[static_cast<std::size_t>(node)].children;
  auto it = std::lower_bound(kids.begin(), kids.end(), byte,
                             [](const std::pair<unsigned char, int32_t>& k, unsigned char b) { return k.first < b; });
  return (it != kids.end() && it->first == byte) ? it->second : -1;
}

void AddedTokenMatcher::add(std::string_view content, int32_t id, bool special) {
  if (content.empty()) return;
  int32_t node = 0;
  for (unsigned char b : content) {
    int32_t next = child(node, b);
    if (next < 0) {
      next = static_cast<int32_t>(m_nodes.size());
      m_nodes.emplace_back();
      auto& kids = m_nodes[static_cast<std::size_t>(node)].children;
      auto it =
          std::lower_bound(kids.begin(), kids.end(), b,
                           [](const std::pair<unsigned char, int32_t>& k, unsigned char v) { return k.first < v; });
      kids.insert(it, {b, next});
    }
    node = next;
  }
  Node& end = m_nodes[static_cast<std::size_t>(node)];
  end.id = id;
  end.special = special;
  m_first_byte[static_cast<unsigned char>(content[0])] = true;
  m_any = true;
  if (!special) m_any_non_special = true;
}

template <typename Accept>
std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::find_where(std::string_view text, std::size_t from,
                                                                      Accept accept) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = from; i < text.size(); ++i) {
    if (!m_first_byte[p[i]]) continue;
    int32_t node = 0;
    std::optional<Match> best;
    for (std::size_t j = i; j < text.size(); ++j) {
      node = child(node, p[j]);
      if (node < 0) break;
      const Node& n = m_nodes[static_cast<std::size_t>(node)];
      if (n.id >= 0 && accept(i, j + 1 - i, n.special)) best = Match{i, j + 1 - i, n.id};
    }
    if (best) return best;
  }
  return std::nullopt;
}

std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::find(std::string_view text, std::size_t from,
                                                                bool allow_special) const {
  if (!has_tokens(allow_special)) return std::nullopt;
  return find_where(text, from,
                    [allow_special](std::size_t, std::size_t, bool special) { return allow_special || !special; });
}

std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::find_in(std::string_view text, std::size_t from,
                                                                   std::span<const TextRange> ranges) const {
  if (!has_tokens(!ranges.empty())) return std::nullopt;
  return find_where(text, from, [ranges](std::size_t pos, std::size_t length, bool special) {
    if (!special) return true;
    // The last range that begins at or before pos must also end at or after the token's end.
    auto it = std::upper_bound(ranges.begin(), ranges.end(), pos,
                               [](std::size_t v, const TextRange& r) { return v < r.begin; });
    if (it == ranges.begin()) return false;
    --it;
    return pos + length <= it->end;
  });
}

std::vector<std::pair<int32_t, bool>> AddedTokenMatcher::tokens() const {
  std::vector<std::pair<int32_t, bool>> out;
  for (const Node& n : m_nodes)
    if (n.id >= 0) out.emplace_back(n.id, n.special);
  return out;
}

}  // namespace engine::tokenizer
