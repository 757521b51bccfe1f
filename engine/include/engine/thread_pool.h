// A small persistent thread pool for the CPU backend's loops.
//
// parallel_for(n, fn) splits [0, n) into chunks that the calling thread and the workers claim from a
// shared counter until none are left. The caller always works too, so a worker that is slow to wake
// (descheduled by another process, asleep after a pause) delays nothing: the caller simply takes its
// chunks. Workers spin briefly between jobs before sleeping, because decode issues a few hundred
// short jobs per token and a condition-variable wake-up per job would cost more than the work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
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
  struct Job;
  void worker_loop();
  static void work_on(Job& job);

  int m_n_threads = 1;
  std::vector<std::thread> m_workers;
  Job* m_job = nullptr;  // guarded by m_mutex
  std::atomic<uint64_t> m_generation{0};
  std::atomic<int> m_sleeping{0};
  bool m_stop = false;  // guarded by m_mutex
  std::mutex m_mutex;
  std::condition_variable m_wake;
};

int default_thread_count();

}  // namespace engine
