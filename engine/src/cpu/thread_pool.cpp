// ThreadPool: see thread_pool.h for why the caller works too, why workers spin before sleeping and
// why a job is handed out without a lock.
//
// Lifetime rule: fn lives on the caller's stack. A worker calls it only for a chunk it claimed with
// a compare-and-swap on m_next, whose one word names the job's generation, its chunk count and its
// next chunk; the caller waits until every chunk is done before returning (or writing the next
// job), so no claimed chunk outlives fn. A worker holding a stale generation fails its claim, and a
// finished job's word reads exhausted, so nothing can be claimed while the next job is being written.
#include "engine/thread_pool.h"

#include <algorithm>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpu_relax() { _mm_pause(); }
#else
static inline void cpu_relax() {}
#endif

namespace engine {

namespace {
// A worker waits for the next job this many steps of wait_step before sleeping: roughly 0.1-1 ms
// (pause is 10-140 cycles depending on the CPU, a yield on an idle core well under a microsecond).
constexpr int kSpinIterations = 2000;
// After this many pauses (tens of microseconds, longer than a decode chunk's usual wait) a waiting
// thread yields its core between checks instead. On a machine with more runnable threads than cores,
// a waiter that only spins holds a core while the thread it waits for (a worker descheduled
// mid-chunk) queues for one; on an idle machine yield returns at once and costs a syscall.
constexpr int kPureSpinIterations = 64;

inline void wait_step(int& spins) {
  if (++spins < kPureSpinIterations) cpu_relax();
  else std::this_thread::yield();
}

// m_next's word: generation (32 bits), the job's chunk count (16), its next unclaimed chunk (16).
constexpr int k_max_chunks = 0xffff;
constexpr uint64_t pack(uint32_t generation, uint32_t n_chunks, uint32_t next) {
  return uint64_t{generation} << 32 | uint64_t{n_chunks} << 16 | next;
}
}  // namespace

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
    m_stop.store(true);
    m_generation.fetch_add(1);
  }
  m_wake.notify_all();
  for (auto& t : m_workers) t.join();
}

void ThreadPool::work_on(uint32_t generation) {
  for (;;) {
    uint64_t v = m_next.load(std::memory_order_acquire);
    uint32_t chunk = 0, n_chunks = 0;
    for (;;) {
      if (v >> 32 != generation) return;  // another job has replaced it
      n_chunks = static_cast<uint32_t>(v >> 16) & 0xffffu;
      chunk = static_cast<uint32_t>(v) & 0xffffu;
      if (chunk >= n_chunks) return;  // exhausted: decided from the word itself, never from a field
      if (m_next.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
    // The claim succeeded, so this job is the current one and stays so until this chunk is done:
    // fn and n are the ones published with it (acquire on m_next pairs with the caller's release).
    const int64_t n = m_n.load(std::memory_order_relaxed);
    const int64_t begin = n * chunk / n_chunks, end = n * (chunk + 1) / n_chunks;
    try {
      if (begin < end) (*m_fn.load(std::memory_order_relaxed))(begin, end);
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(m_error_mutex);
        if (!m_error) m_error = std::current_exception();
      }
      // Unclaimed chunks are skipped but still counted, so the caller's wait ends.
      uint64_t w = m_next.load(std::memory_order_acquire);
      while (w >> 32 == generation && (w & 0xffffu) < n_chunks &&
             !m_next.compare_exchange_weak(w, pack(generation, n_chunks, n_chunks), std::memory_order_acq_rel))
        ;
      if (w >> 32 == generation && (w & 0xffffu) < n_chunks)
        m_done.fetch_add(n_chunks - static_cast<int64_t>(w & 0xffffu), std::memory_order_acq_rel);
    }
    m_done.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int chunks_per_thread) {
  if (n <= 0) return;
  const int64_t n_chunks =
      std::min<int64_t>({n, static_cast<int64_t>(m_n_threads) * std::max(1, chunks_per_thread), int64_t{k_max_chunks}});
  if (m_n_threads == 1 || n_chunks == 1) {
    fn(0, n);
    return;
  }
  // The previous job is exhausted and complete (this caller waited for it), and its word in m_next
  // says so, so no worker can claim anything until the new word is stored, after the fields.
  const uint32_t generation = static_cast<uint32_t>(m_generation.load(std::memory_order_relaxed) + 1);
  m_fn.store(&fn, std::memory_order_relaxed);
  m_n.store(n, std::memory_order_relaxed);
  m_done.store(0, std::memory_order_relaxed);
  m_error = nullptr;
  m_next.store(pack(generation, static_cast<uint32_t>(n_chunks), 0), std::memory_order_release);
  // seq_cst with the workers' m_sleeping increment and their wait predicate: either this load sees a
  // worker about to sleep (and wakes it under the mutex), or that worker's predicate sees this job.
  m_generation.store(generation, std::memory_order_seq_cst);
  if (m_sleeping.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_wake.notify_all();
  }
  work_on(generation);
  for (int spins = 0; m_done.load(std::memory_order_acquire) != n_chunks;) wait_step(spins);
  if (m_error) std::rethrow_exception(m_error);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;  // a job published before this thread started is joined too
  for (;;) {
    uint64_t gen = m_generation.load(std::memory_order_acquire);
    for (int spins = 0; gen == seen && spins < kSpinIterations;) {
      wait_step(spins);
      gen = m_generation.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_sleeping.fetch_add(1, std::memory_order_seq_cst);
      m_wake.wait(lock, [&] { return m_generation.load(std::memory_order_seq_cst) != seen; });
      m_sleeping.fetch_sub(1, std::memory_order_seq_cst);
      gen = m_generation.load(std::memory_order_acquire);
    }
    seen = gen;
    if (m_stop.load(std::memory_order_acquire)) return;
    work_on(static_cast<uint32_t>(gen));
  }
}

}  // namespace engine
