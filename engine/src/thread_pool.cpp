// ThreadPool: see thread_pool.h for why workers spin before sleeping.
#include "engine/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpu_relax() { _mm_pause(); }
#else
static inline void cpu_relax() {}
#endif

namespace engine {

namespace {
// About 50-100 microseconds of spinning before a worker goes to sleep.
constexpr int kSpinIterations = 20000;
}  // namespace

int default_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) {
  m_n_threads = n_threads > 0 ? n_threads : default_thread_count();
  for (int i = 1; i < m_n_threads; ++i) m_workers.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop.store(true);
    m_generation.fetch_add(1);
  }
  m_wake.notify_all();
  for (auto& t : m_workers) t.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  if (m_n_threads == 1) {
    fn(0, 1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_job = &fn;
    m_pending.store(m_n_threads - 1, std::memory_order_relaxed);
    m_generation.fetch_add(1, std::memory_order_release);
  }
  m_wake.notify_all();
  fn(0, m_n_threads);
  while (m_pending.load(std::memory_order_acquire) != 0) cpu_relax();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int nt = static_cast<int>(std::min<int64_t>(m_n_threads, n));
  if (nt == 1) {
    fn(0, n);
    return;
  }
  run([&](int ti, int) {
    if (ti >= nt) return;
    const int64_t begin = n * ti / nt, end = n * (ti + 1) / nt;
    if (begin < end) fn(begin, end);
  });
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = m_generation.load(std::memory_order_acquire);
    for (int spin = 0; gen == seen && spin < kSpinIterations; ++spin) {
      cpu_relax();
      gen = m_generation.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_wake.wait(lock, [&] { return m_generation.load() != seen; });
      gen = m_generation.load();
    }
    seen = gen;
    if (m_stop.load()) return;
    const std::function<void(int, int)>* job;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      job = m_job;
    }
    (*job)(index, m_n_threads);
    m_pending.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace engine
