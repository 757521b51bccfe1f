// Ranks of a data-parallel run as threads of one test process: a Communicator whose collectives meet at a
// std::barrier, so the trainer's data-parallel path is tested in every build, with or without MPI. The sums are
// taken in rank order, so a run is repeatable.
#pragma once

#include <barrier>
#include <cstdlib>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/dist/communicator.h"

class ThreadGroup {
 public:
  explicit ThreadGroup(int world) : m_world(world), m_barrier(world), m_slots(size_t(world)) {}

  // The communicator of rank `rank`; call collectives only from that rank's thread.
  std::unique_ptr<engine::Communicator> communicator(int rank);

  int world() const { return m_world; }

  // Every rank's data[i] becomes the sum over the ranks, added in rank order.
  template <typename T>
  void sum(int rank, T* data, size_t n) {
    m_slots[size_t(rank)] = {data, n};
    m_barrier.arrive_and_wait();
    std::vector<T> total(n, T(0));
    for (int r = 0; r < m_world; ++r) {
      const T* src = static_cast<const T*>(m_slots[size_t(r)].first);
      if (m_slots[size_t(r)].second != n) std::abort();  // ranks disagree on the collective: a bug under test
      for (size_t i = 0; i < n; ++i) total[i] += src[i];
    }
    m_barrier.arrive_and_wait();  // everyone has read every buffer
    for (size_t i = 0; i < n; ++i) data[i] = total[i];
  }

 private:
  int m_world;
  std::barrier<> m_barrier;
  std::vector<std::pair<const void*, size_t>> m_slots;
};

class ThreadCommunicator final : public engine::Communicator {
 public:
  ThreadCommunicator(ThreadGroup& group, int rank) : m_group(group), m_rank(rank) {}
  int rank() const override { return m_rank; }
  int world_size() const override { return m_group.world(); }
  int local_size() const override { return m_group.world(); }
  std::string backend_name() const override { return "threads"; }
  void allreduce_sum(float* data, size_t n) override { m_group.sum(m_rank, data, n); }
  void allreduce_sum(double* data, size_t n) override { m_group.sum(m_rank, data, n); }
  void start_allreduce_sum(float* data, size_t n) override { m_pending.emplace_back(data, n); }
  void wait_all() override {
    for (auto [data, n] : m_pending) m_group.sum(m_rank, data, n);
    m_pending.clear();
  }
  // The whole buffer summed in rank order (as allreduce_sum, so a sharded run adds exactly as an unsharded one);
  // the blocks of the other ranks are then scribbled over, as the interface allows, so a caller that reads them
  // fails its test.
  void reduce_scatter_sum(float* data, std::span<const size_t> counts) override {
    const auto [first, n] = block(counts);
    size_t total = 0;
    for (size_t c : counts) total += c;
    m_group.sum(m_rank, data, total);
    for (size_t i = 0; i < total; ++i)
      if (i < first || i >= first + n) data[i] = -1e30f;
  }
  // Each rank's block from its own buffer: a sum in which every other rank adds zeros to it.
  void allgather(float* data, std::span<const size_t> counts) override {
    const auto [first, n] = block(counts);
    size_t total = 0;
    for (size_t c : counts) total += c;
    for (size_t i = 0; i < total; ++i)
      if (i < first || i >= first + n) data[i] = 0.0f;
    m_group.sum(m_rank, data, total);
  }
  bool any(bool flag) override {
    double v = flag ? 1 : 0;
    m_group.sum(m_rank, &v, 1);
    return v > 0;
  }
  void barrier() override {
    double v = 0;
    m_group.sum(m_rank, &v, 1);
  }
  [[noreturn]] void abort(int code) override { std::exit(code); }

 private:
  std::pair<size_t, size_t> block(std::span<const size_t> counts) const {
    if (counts.size() != size_t(m_group.world())) std::abort();  // a bug under test
    size_t first = 0;
    for (int r = 0; r < m_rank; ++r) first += counts[size_t(r)];
    return {first, counts[size_t(m_rank)]};
  }

  ThreadGroup& m_group;
  int m_rank;
  std::vector<std::pair<float*, size_t>> m_pending;
};

inline std::unique_ptr<engine::Communicator> ThreadGroup::communicator(int rank) {
  return std::make_unique<ThreadCommunicator>(*this, rank);
}
