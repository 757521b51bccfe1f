// Bucketed gradient all-reduce: see engine/train/gradient_sync.h.
#include "engine/train/gradient_sync.h"

#include <algorithm>
#include <chrono>

#include "engine/dist/communicator.h"

namespace engine {

GradientSync::GradientSync(Communicator& comm, const std::vector<TrainableTensor>& tensors, size_t bucket_bytes)
    : m_comm(comm) {
  const size_t cap = std::max<size_t>(1, bucket_bytes / sizeof(float));
  // Last tensor first: each tensor's buffer is walked from its end, and a piece joins the open bucket when it ends
  // exactly where that bucket begins (the two are neighbours in memory) and the bucket has room.
  for (auto t = tensors.rbegin(); t != tensors.rend(); ++t) {
    if (!t->grad || t->numel == 0) continue;
    size_t left = size_t(t->numel);
    while (left > 0) {
      Bucket* open = m_buckets.empty() ? nullptr : &m_buckets.back();
      const bool joins = open && open->data == t->grad + left && open->n < cap;
      const size_t room = joins ? cap - open->n : cap;
      const size_t take = std::min(left, room);
      left -= take;
      if (joins) {
        open->data -= take;
        open->n += take;
      } else {
        m_buckets.push_back({t->grad + left, take});
      }
    }
    m_bytes += t->numel * sizeof(float);
  }
}

void GradientSync::all_reduce() {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  m_comm.barrier();
  const auto t1 = clock::now();
  for (const Bucket& b : m_buckets) m_comm.start_allreduce_sum(b.data, b.n);
  m_comm.wait_all();
  m_wait_seconds += std::chrono::duration<double>(t1 - t0).count();
  m_seconds += std::chrono::duration<double>(clock::now() - t1).count();
}

}  // namespace engine
