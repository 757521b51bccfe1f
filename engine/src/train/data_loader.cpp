// Shared pieces of the batch loaders: the portable shuffle generator and Batch helpers.
#include "engine/train/data_loader.h"

#include <utility>

#include "engine/error.h"

namespace engine {

int64_t Batch::counted_positions() const {
  int64_t n = 0;
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i] >= 0 && (weights.empty() || weights[i] != 0.0f)) ++n;
  return n;
}

double Batch::counted_weight() const {
  double w = 0;
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i] >= 0) w += weights.empty() ? 1.0 : double(weights[i]);
  return w;
}

void take_rows(const Batch& from, int first, int count, Batch& to) {
  if (first < 0 || count < 0 || first + count > from.B) throw Error("take_rows: rows outside the batch");
  const size_t T = size_t(from.T), lo = size_t(first) * T, hi = size_t(first + count) * T;
  to.B = count;
  to.T = from.T;
  to.inputs.assign(from.inputs.begin() + std::ptrdiff_t(lo), from.inputs.begin() + std::ptrdiff_t(hi));
  to.targets.assign(from.targets.begin() + std::ptrdiff_t(lo), from.targets.begin() + std::ptrdiff_t(hi));
  if (from.weights.empty()) to.weights.clear();
  else to.weights.assign(from.weights.begin() + std::ptrdiff_t(lo), from.weights.begin() + std::ptrdiff_t(hi));
  if (from.lengths.empty()) to.lengths.clear();
  else to.lengths.assign(from.lengths.begin() + first, from.lengths.begin() + first + count);
}

uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<uint32_t> epoch_permutation(uint32_t n, uint64_t seed, uint64_t epoch) {
  std::vector<uint32_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = i;
  // Mixing the epoch through one splitmix step keeps (seed, epoch) and (seed + 1, epoch - 1) apart.
  uint64_t state = seed ^ (epoch * 0xD1B54A32D192ED03ull);
  splitmix64_next(state);
  for (uint32_t i = n; i > 1; --i) {
    // Unbiased draw in [0, i): reject the top partial range of 2^64 (Lemire-free, simple and exact).
    const uint64_t bound = i;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do r = splitmix64_next(state);
    while (r >= limit);
    std::swap(p[i - 1], p[static_cast<uint32_t>(r % bound)]);
  }
  return p;
}

EpochOrder::EpochOrder(uint64_t units, int per_batch, bool shuffle, uint64_t seed, const std::string& label)
    : m_per_batch(per_batch), m_shuffle(shuffle), m_seed(seed) {
  if (per_batch < 1) throw Error(label + ": the batch size must be >= 1");
  if (units > UINT32_MAX) throw Error(label + ": too many items for one data set");
  if (units < uint64_t(per_batch))
    throw Error(label + ": " + std::to_string(units) + " items cannot fill one batch of " + std::to_string(per_batch) +
                "; use more data or a smaller --batch");
  m_units = static_cast<uint32_t>(units);
}

void EpochOrder::next(std::vector<uint32_t>& items) {
  if (m_shuffle && m_perm_epoch != m_pos.epoch) {
    m_perm = epoch_permutation(m_units, m_seed, m_pos.epoch);
    m_perm_epoch = m_pos.epoch;
  }
  items.resize(size_t(m_per_batch));
  for (int b = 0; b < m_per_batch; ++b) {
    const uint64_t i = m_pos.cursor + uint64_t(b);
    items[size_t(b)] = m_shuffle ? m_perm[i] : static_cast<uint32_t>(i);
  }
  m_pos.cursor += uint64_t(m_per_batch);
  if (m_pos.cursor + uint64_t(m_per_batch) > m_units) {
    m_pos.cursor = 0;
    ++m_pos.epoch;
  }
}

void EpochOrder::seek(const DataPosition& p) {
  if (p.cursor + uint64_t(m_per_batch) > m_units)
    throw Error("data position " + std::to_string(p.cursor) + " lies outside this data set (" +
                std::to_string(m_units) + " items): was the checkpoint made with other data or another batch size?");
  m_pos = p;
}

}  // namespace engine
