// ThreadPool: see thread_pool.h for why the caller works too and why workers spin before sleeping.
//
// Lifetime rule: a Job lives on the caller's stack. A worker may only touch it after registering in
// job.inside while holding m_mutex and seeing m_job == &job; the caller unpublishes the job under
// the same mutex and then waits for inside == 0, so no worker can touch a finished job.
#include "engine/thread_pool.h"

#include <algorithm>
#include <exception>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpu_relax() { _mm_pause(); }
#else
static inline void cpu_relax() {}
#endif

namespace engine {

namespace {
// Roughly 0.1-1 ms of spinning (pause is 10-140 cycles depending on the CPU) before sleeping.
constexpr int kSpinIterations = 20000;
}  // namespace

struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, n_chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> inside{0};
  // The first exception thrown by fn on any thread; the caller rethrows it once every thread has
  // left the job (an exception must neither unwind past running workers nor terminate a worker).
  std::mutex error_mutex;
  std::exception_ptr error;
};

int default_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) {
  m_n_threads = n_threads > 0 ? n_threads : default_thread_count();
  for (int i = 1; i < m_n_threads; ++i) m_workers.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
    m_generation.fetch_add(1);
  }
  m_wake.notify_all();
  for (auto& t : m_workers) t.join();
}

void ThreadPool::work_on(Job& job) {
  for (;;) {
    const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.n_chunks) return;
    const int64_t begin = job.n * c / job.n_chunks, end = job.n * (c + 1) / job.n_chunks;
    try {
      if (begin < end) (*job.fn)(begin, end);
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(job.error_mutex);
        if (!job.error) job.error = std::current_exception();
      }
      // Unclaimed chunks are skipped but still counted, so the caller's wait ends.
      const int64_t skipped = std::max<int64_t>(0, job.n_chunks - job.next.exchange(job.n_chunks));
      job.done.fetch_add(skipped, std::memory_order_acq_rel);
    }
    job.done.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int chunks_per_thread) {
  if (n <= 0) return;
  const int64_t n_chunks = std::min<int64_t>(n, static_cast<int64_t>(m_n_threads) * std::max(1, chunks_per_thread));
  if (m_n_threads == 1 || n_chunks == 1) {
    fn(0, n);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  job.n_chunks = n_chunks;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_job = &job;
    m_generation.fetch_add(1, std::memory_order_release);
  }
  if (m_sleeping.load(std::memory_order_acquire) > 0) m_wake.notify_all();
  work_on(job);
  while (job.done.load(std::memory_order_acquire) != n_chunks) cpu_relax();
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_job = nullptr;
  }
  while (job.inside.load(std::memory_order_acquire) != 0) cpu_relax();
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = m_generation.load(std::memory_order_acquire);
    for (int spin = 0; gen == seen && spin < kSpinIterations; ++spin) {
      cpu_relax();
      gen = m_generation.load(std::memory_order_acquire);
    }
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      if (m_generation.load() == seen) {
        m_sleeping.fetch_add(1);
        m_wake.wait(lock, [&] { return m_generation.load() != seen; });
        m_sleeping.fetch_sub(1);
      }
      seen = m_generation.load();
      if (m_stop) return;
      job = m_job;
      if (job) job->inside.fetch_add(1, std::memory_order_acq_rel);
    }
    if (!job) continue;  // woke after the caller had already finished that job alone
    work_on(*job);
    job->inside.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace engine
