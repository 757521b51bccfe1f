// A small persistent thread pool for the CPU backend's loops.
//
// run(fn) calls fn(thread_index, n_threads) once on every thread, the caller being thread 0, and
// returns when all are done. Workers spin briefly between jobs before sleeping: decode issues a few
// hundred short jobs per token, and waking sleeping threads through a condition variable each time
// would cost more than the work itself.
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
  void run(const std::function<void(int thread_index, int n_threads)>& fn);

  // Splits [0, n) into near-equal contiguous chunks, one per thread; fn(begin, end).
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

 private:
  void worker_loop(int index);

  int m_n_threads = 1;
  std::vector<std::thread> m_workers;
  const std::function<void(int, int)>* m_job = nullptr;
  std::atomic<uint64_t> m_generation{0};
  std::atomic<int> m_pending{0};
  std::atomic<bool> m_stop{false};
  std::mutex m_mutex;
  std::condition_variable m_wake;
};

int default_thread_count();

}  // namespace engine
