// ZeRO stage 1's exchanges: see engine/train/zero_shard.h.
#include "engine/train/zero_shard.h"

#include <algorithm>
#include <chrono>

#include "engine/dist/communicator.h"
#include "engine/error.h"

namespace engine {

std::vector<uint64_t> shard_bounds(uint64_t total, int world) {
  if (world < 1) throw Error("shard_bounds: a world of " + std::to_string(world) + " ranks");
  std::vector<uint64_t> b(size_t(world) + 1);
  // r * total / world rounded down to the alignment: monotone, and within kShardAlign of the even split. The product
  // is taken in 128 bits: total may be large and world up to INT_MAX.
  for (int r = 1; r < world; ++r)
    b[size_t(r)] = uint64_t((unsigned __int128)total * unsigned(r) / unsigned(world)) / kShardAlign * kShardAlign;
  b[size_t(world)] = total;
  return b;
}

ZeroShard::ZeroShard(Communicator& comm, const std::vector<TrainableTensor>& tensors, size_t bucket_bytes)
    : m_comm(comm), m_tensors(tensors) {
  uint64_t total = 0;
  for (const TrainableTensor& t : m_tensors) {
    if (!t.value || !t.grad) throw Error("ZeRO: trainable tensor '" + t.name + "' has no value or gradient buffer");
    total += t.numel;
  }
  m_bounds = shard_bounds(total, comm.world_size());
  const size_t cap = std::max<size_t>(1, bucket_bytes / sizeof(float));
  m_grad_pieces = plan(true, cap);
  m_value_pieces = plan(false, cap);
  m_bytes = total * sizeof(float);
}

FlatRange ZeroShard::shard() const {
  const auto r = size_t(m_comm.rank());
  return {m_bounds[r], m_bounds[r + 1]};
}

std::vector<size_t> ZeroShard::counts_of(uint64_t begin, uint64_t n) const {
  std::vector<size_t> counts(m_bounds.size() - 1);
  for (size_t r = 0; r < counts.size(); ++r) {
    const uint64_t lo = std::clamp(m_bounds[r], begin, begin + n), hi = std::clamp(m_bounds[r + 1], begin, begin + n);
    counts[r] = size_t(hi - lo);
  }
  return counts;
}

// Pieces in flat order: a tensor joins the open piece when its buffer starts where the piece's ends and the piece has
// room; a tensor larger than the room is cut. Each piece's flat range is contiguous, so the ranks' parts of it are
// consecutive blocks, in rank order -- the layout the communicator's reduce_scatter_sum and allgather take.
std::vector<ZeroShard::Piece> ZeroShard::plan(bool gradients, size_t cap) const {
  std::vector<Piece> pieces;
  std::vector<std::pair<uint64_t, uint64_t>> flat;  // per piece: first flat index, length
  uint64_t offset = 0;
  for (const TrainableTensor& t : m_tensors) {
    float* base = gradients ? t.grad : t.value;
    uint64_t done = 0;
    while (done < t.numel) {
      const bool joins = !pieces.empty() && pieces.back().data + flat.back().second == base + done &&
                         flat.back().first + flat.back().second == offset + done && flat.back().second < cap;
      if (!joins) {
        pieces.push_back({base + done, {}});
        flat.emplace_back(offset + done, 0);
      }
      const uint64_t take = std::min<uint64_t>(t.numel - done, cap - flat.back().second);
      flat.back().second += take;
      done += take;
    }
    offset += t.numel;
  }
  for (size_t i = 0; i < pieces.size(); ++i) pieces[i].counts = counts_of(flat[i].first, flat[i].second);
  return pieces;
}

void ZeroShard::reduce_scatter_gradients() {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  m_comm.barrier();
  const auto t1 = clock::now();
  for (const Piece& p : m_grad_pieces) m_comm.reduce_scatter_sum(p.data, p.counts);
  m_wait_seconds += std::chrono::duration<double>(t1 - t0).count();
  m_seconds += std::chrono::duration<double>(clock::now() - t1).count();
}

void ZeroShard::all_gather_values() {
  const auto t0 = std::chrono::steady_clock::now();
  for (const Piece& p : m_value_pieces) m_comm.allgather(p.data, p.counts);
  m_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::unique_ptr<AdamW> ZeroShard::gather_optimizer(const AdamW& opt, int root) {
  if (opt.shard() != shard() || opt.tensors().size() != m_tensors.size())
    throw Error("ZeRO: the optimizer is not sharded as this plan");
  std::unique_ptr<AdamW> full;
  if (m_comm.rank() == root) {
    full = std::make_unique<AdamW>(m_tensors, opt.params());
    full->set_step_count(opt.step_count());
  }
  // Tensor by tensor: every rank's part of tensor i is a consecutive block of it, in rank order.
  std::vector<float> buf;
  uint64_t offset = 0;
  for (size_t i = 0; i < m_tensors.size(); ++i) {
    const uint64_t n = m_tensors[i].numel, first = offset;
    offset += n;
    for (int k = 0; k < 2; ++k) {
      const std::vector<float>& mine = k == 0 ? opt.first_moment(i) : opt.second_moment(i);
      float* dst = nullptr;
      if (full) {
        dst = (k == 0 ? full->first_moment(i) : full->second_moment(i)).data();
      } else {
        buf.resize(n);
        dst = buf.data();
      }
      std::copy(mine.begin(), mine.end(), dst + opt.moment_offset(i));
      // Pieces of at most 2^30 values: MPI counts are ints.
      constexpr uint64_t kMax = uint64_t(1) << 30;
      for (uint64_t at = 0; at < n; at += kMax) {
        const uint64_t len = std::min(kMax, n - at);
        m_comm.allgather(dst + at, counts_of(first + at, len));
      }
    }
  }
  return full;
}

}  // namespace engine
