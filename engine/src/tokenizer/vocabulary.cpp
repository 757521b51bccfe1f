// Vocabulary construction with the validation described in vocabulary.h.
#include "tokenizer/vocabulary.h"

#include <limits>

#include "engine/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/guarded_json.h"

namespace engine::tokenizer {

Vocabulary Vocabulary::build(std::vector<std::pair<std::string, int64_t>> entries, const std::string& source) {
  Vocabulary v;
  // Size the table once from the largest id, after checking the range of every id, so the
  // unused-id bound is enforced before the allocation.
  int64_t max_id = -1;
  for (const auto& [piece, id] : entries) {
    if (id < 0 || id >= std::numeric_limits<int32_t>::max())
      throw Error(source + ": token " + quote_for_message(piece) + " has id " + std::to_string(id) +
                  ", outside [0, 2^31 - 1)");
    if (id > max_id) max_id = id;
  }
  if (max_id + 1 - static_cast<int64_t>(entries.size()) > k_max_unused_ids)
    throw Error(source + ": token ids go up to " + std::to_string(max_id) + " but there are only " +
                std::to_string(entries.size()) + " tokens (more than " + std::to_string(k_max_unused_ids) +
                " unused ids)");
  const auto table_size = static_cast<std::size_t>(max_id + 1);
  v.m_pieces.resize(table_size);
  v.m_bytes.resize(table_size);
  v.m_used.resize(table_size, false);
  v.m_ids.reserve(entries.size());
  for (auto& [piece, id] : entries) v.add(std::move(piece), id, source);
  return v;
}

void Vocabulary::grow_to(int64_t id, const std::string& source) {
  if (id < static_cast<int64_t>(m_pieces.size())) return;
  const int64_t new_size = id + 1;
  if (new_size - (m_used_count + 1) > k_max_unused_ids)
    throw Error(source + ": token id " + std::to_string(id) + " leaves more than " + std::to_string(k_max_unused_ids) +
                " unused ids");
  m_pieces.resize(static_cast<std::size_t>(new_size));
  m_bytes.resize(static_cast<std::size_t>(new_size));
  m_used.resize(static_cast<std::size_t>(new_size), false);
}

void Vocabulary::add(std::string piece, int64_t id, const std::string& source) {
  if (id < 0 || id >= std::numeric_limits<int32_t>::max())
    throw Error(source + ": token " + quote_for_message(piece) + " has id " + std::to_string(id) +
                ", outside [0, 2^31 - 1)");
  if (auto it = m_ids.find(piece); it != m_ids.end())
    throw Error(source + ": token " + quote_for_message(piece) + " appears twice (ids " + std::to_string(it->second) +
                " and " + std::to_string(id) + ")");
  grow_to(id, source);
  const auto slot = static_cast<std::size_t>(id);
  if (m_used[slot])
    throw Error(source + ": id " + std::to_string(id) + " is given to two tokens, " +
                quote_for_message(m_pieces[slot]) + " and " + quote_for_message(piece));
  std::optional<std::string> raw = piece_to_bytes(piece);
  m_bytes[slot] = raw ? std::move(*raw) : piece;
  m_ids.emplace(piece, static_cast<int32_t>(id));
  m_pieces[slot] = std::move(piece);
  m_used[slot] = true;
  ++m_used_count;
}

std::optional<int32_t> Vocabulary::find(std::string_view piece) const {
  if (auto it = m_ids.find(piece); it != m_ids.end()) return it->second;
  return std::nullopt;
}

}  // namespace engine::tokenizer
