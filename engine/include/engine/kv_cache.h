// Fixed-capacity key/value cache for one sequence.
//
// Allocated up front for `capacity` positions so decode never reallocates: per layer, keys and values
// are (capacity, KVH*HS) row-major. size() is the number of positions filled; truncate() rewinds
// (regenerate / edit a message without recomputing the shared prefix).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model.h"

namespace engine {

class KVCache {
 public:
  KVCache(const ModelConfig& config, int capacity);

  int capacity() const { return m_capacity; }
  int size() const { return m_size; }
  int row_width() const { return m_row; }  // KVH*HS floats per position
  int layers() const { return m_layers; }
  void clear() { m_size = 0; }
  void truncate(int n);  // keeps the first n positions (n <= size())

  float* keys(int layer) { return m_k.data() + static_cast<int64_t>(layer) * m_capacity * m_row; }
  float* values(int layer) { return m_v.data() + static_cast<int64_t>(layer) * m_capacity * m_row; }
  const float* keys(int layer) const { return m_k.data() + static_cast<int64_t>(layer) * m_capacity * m_row; }
  const float* values(int layer) const { return m_v.data() + static_cast<int64_t>(layer) * m_capacity * m_row; }

  // Called by Runner after a step has written T new positions.
  void advance(int T) { m_size += T; }
  uint64_t bytes() const { return (m_k.size() + m_v.size()) * sizeof(float); }

 private:
  int m_capacity = 0, m_row = 0, m_layers = 0, m_size = 0;
  std::vector<float> m_k, m_v;
};

}  // namespace engine
