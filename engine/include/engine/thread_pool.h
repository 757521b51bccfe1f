// A small persistent thread pool for the CPU backend's loops.
//
// parallel_for(n, fn) splits [0, n) into chunks that the calling thread and the workers claim from a
// shared counter until none are left. The caller always works too, so a worker that is slow to wake
// (descheduled by another process, asleep after a pause) delays nothing: the caller simply takes its
// chunks. Workers spin briefly between jobs before sleeping, because decode issues a few hundred
// short jobs per token and a condition-variable wake-up per job would cost more than the work. For
// the same reason handing out a job takes no lock: with 16 threads, a mutex taken by every worker
// for every job serialised them (GPT-2 decode got slower from 8 to 16 threads).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace engine {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads <= 0: hardware concurrency
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return m_n_threads; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), about chunks_per_thread ranges per
  // thread (1 = one contiguous range per thread, for calls with a high fixed cost such as sgemm).
  // Not reentrant: fn must not call parallel_for on the same pool.
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn, int chunks_per_thread = 4);

 private:
  void worker_loop();
  // Claims and runs chunks of job `generation` until none are left or another job has replaced it.
  void work_on(uint32_t generation);

  int m_n_threads = 1;
  std::vector<std::thread> m_workers;
  // The current job, rewritten only by parallel_for when the previous one is complete. m_next holds
  // the job's generation, chunk count and next unclaimed chunk in one word: a worker claims a chunk
  // with a compare-and-swap that fails if the job it read is no longer the current one, and decides
  // that a job is exhausted from that word alone, so a worker descheduled over a job boundary can
  // never run a chunk of the wrong job (thread_pool.cpp).
  std::atomic<const std::function<void(int64_t, int64_t)>*> m_fn{nullptr};
  std::atomic<int64_t> m_n{0};
  std::atomic<uint64_t> m_next{0};
  std::atomic<int64_t> m_done{0};
  std::mutex m_error_mutex;
  std::exception_ptr m_error;  // the job's first exception, guarded by m_error_mutex

  std::atomic<uint64_t> m_generation{0};  // bumped to publish a job (or the stop)
  std::atomic<int> m_sleeping{0};
  std::atomic<bool> m_stop{false};
  std::mutex m_mutex;  // only for sleeping and waking
  std::condition_variable m_wake;
};

int default_thread_count();

}  // namespace engine
