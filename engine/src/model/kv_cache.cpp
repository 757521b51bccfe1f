// KVCache: see kv_cache.h.
#include "engine/kv_cache.h"

#include "engine/error.h"

namespace engine {

KVCache::KVCache(const ModelConfig& config, int capacity) {
  if (capacity < 1 || capacity > config.max_seq_len)
    throw Error("KV cache capacity must be in [1, " + std::to_string(config.max_seq_len) + "], got " +
                std::to_string(capacity));
  m_capacity = capacity;
  m_layers = config.n_layer;
  m_row = config.n_kv_head * config.head_size();
  const size_t n = static_cast<size_t>(m_layers) * m_capacity * m_row;
  m_k.assign(n, 0.0f);
  m_v.assign(n, 0.0f);
}

void KVCache::truncate(int n) {
  if (n < 0 || n > m_size)
    throw Error("KV cache truncate to " + std::to_string(n) + " outside [0, " + std::to_string(m_size) + "]");
  m_size = n;
}

}  // namespace engine
