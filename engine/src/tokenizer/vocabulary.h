// The token table of a byte-level BPE tokenizer: id <-> piece, and each id's raw bytes.
//
// Invariants (checked while building, so a hostile file fails with engine::Error instead of
// allocating or indexing out of bounds):
//   * ids are in [0, 2^31 - 1) and unique; pieces are unique;
//   * ids may have gaps (an unused id has an empty piece and empty bytes and is never produced),
//     but at most k_max_unused_ids of them, so one id of 2^31 - 2 cannot make us allocate 2^31 slots;
//   * bytes(id) is the byte-level decoding of the piece, or the piece's own UTF-8 when it contains a
//     character outside the byte-level alphabet (added tokens such as "<|endoftext|>" are ASCII and
//     decode to themselves either way).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace engine::tokenizer {

inline constexpr int64_t k_max_unused_ids = 1 << 16;

// Hash that lets unordered_map<std::string, ...> be searched with a string_view (no allocation).
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

class Vocabulary {
 public:
  // Builds from (piece, id) pairs; `source` names the file in errors.
  static Vocabulary build(std::vector<std::pair<std::string, int64_t>> entries, const std::string& source);

  // Adds one token (an added token absent from the model vocabulary), with the same checks.
  void add(std::string piece, int64_t id, const std::string& source);

  int32_t size() const { return static_cast<int32_t>(m_pieces.size()); }
  bool contains_id(int32_t id) const { return id >= 0 && id < size() && m_used[static_cast<std::size_t>(id)]; }
  std::optional<int32_t> find(std::string_view piece) const;
  const std::string& piece(int32_t id) const { return m_pieces[static_cast<std::size_t>(id)]; }
  const std::string& bytes(int32_t id) const { return m_bytes[static_cast<std::size_t>(id)]; }

 private:
  void grow_to(int64_t id, const std::string& source);

  std::vector<std::string> m_pieces;  // id -> piece ("" when unused)
  std::vector<std::string> m_bytes;   // id -> raw bytes ("" when unused)
  std::vector<bool> m_used;           // id -> has a token
  int64_t m_used_count = 0;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> m_ids;
};

}  // namespace engine::tokenizer
