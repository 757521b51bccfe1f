// A bounded, thread-safe memo of BPE results: word bytes -> token ids.
//
// Natural text repeats the same words constantly, and a cache hit skips the merge loop. Tokenizer is
// used from several threads at once through const encode() (GUI token counting and the worker), so
// the cache is split into shards, each behind its own mutex; contention stays low and no lock is held
// while merging. Memory is bounded: only words up to k_max_word_bytes are cached, and a shard that
// reaches k_max_entries_per_shard is simply cleared (cheaper and simpler than LRU, and the cache
// refills with the words that matter within a few sentences).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace engine::tokenizer {

class WordCache {
 public:
  static constexpr std::size_t k_max_word_bytes = 64;
  static constexpr std::size_t k_shards = 16;
  static constexpr std::size_t k_max_entries_per_shard = 8192;

  static bool cacheable(std::string_view word) { return word.size() <= k_max_word_bytes; }

  // Appends the cached ids of `word` to `out` and returns true, or returns false on a miss.
  bool lookup(std::string_view word, std::vector<int32_t>& out) const {
    Shard& s = shard_for(word);
    std::lock_guard lock(s.mutex);
    auto it = s.map.find(word);
    if (it == s.map.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }

  void store(std::string_view word, std::span<const int32_t> ids) const {
    Shard& s = shard_for(word);
    std::lock_guard lock(s.mutex);
    if (s.map.size() >= k_max_entries_per_shard) s.map.clear();
    s.map.emplace(std::string(word), std::vector<int32_t>(ids.begin(), ids.end()));
  }

 private:
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> map;
  };

  Shard& shard_for(std::string_view word) const {
    // High bits: the map itself uses the low bits of the same hash for its buckets.
    const std::size_t h = StringHash{}(word);
    return m_shards[(h >> (sizeof(std::size_t) * 8 - 4)) % k_shards];
  }

  mutable std::array<Shard, k_shards> m_shards;
};

}  // namespace engine::tokenizer
