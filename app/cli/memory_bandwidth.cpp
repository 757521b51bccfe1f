#include "memory_bandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace wb::cli {

namespace {

// Sum of the words in [p, p + n): eight independent chains, so the loads, not an add's latency, set
// the pace, and a result the optimiser cannot drop.
uint64_t read_words(const uint64_t* p, size_t n) {
  uint64_t s[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += p[i + k];
  for (; i < n; ++i) s[0] += p[i];
  uint64_t total = 0;
  for (uint64_t v : s) total += v;
  return total;
}

uint64_t default_buffer_bytes() {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return std::max<uint64_t>(uint64_t{1} << 30, l3 > 0 ? 4 * static_cast<uint64_t>(l3) : 0);
}

}  // namespace

MemoryBandwidth measure_read_bandwidth(int threads, uint64_t buffer_bytes, int passes) {
  threads = std::max(1, threads);
  if (buffer_bytes == 0) buffer_bytes = default_buffer_bytes();
  const size_t words = buffer_bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);  // not zero-filled: each thread writes its slice
  const size_t per_thread = (words + threads - 1) / threads;
  std::atomic<uint64_t> sink{0};  // the sums go somewhere observable, so the reads stay
  // One pass: every thread reads its slice once; the time is the slowest thread's, as in decode, where
  // a matmul ends when its last row range does.
  auto run = [&](bool write) {
    std::vector<std::thread> pool;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        uint64_t* p = buf.get() + std::min(words, t * per_thread);
        const size_t n = std::min(words, (t + 1) * per_thread) - std::min(words, t * per_thread);
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        if (write) std::fill(p, p + n, static_cast<uint64_t>(t) + 1);
        else sink.fetch_add(read_words(p, n));
      });
    while (ready.load() < threads) std::this_thread::yield();
    const auto t0 = std::chrono::steady_clock::now();
    go.store(true);
    for (auto& th : pool) th.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  run(true);
  double best = 1e30;
  for (int i = 0; i < std::max(1, passes); ++i) best = std::min(best, run(false));
  MemoryBandwidth m;
  m.read_gb_per_s = static_cast<double>(words * sizeof(uint64_t)) / best / 1e9;
  m.buffer_bytes = words * sizeof(uint64_t);
  m.threads = threads;
  return m;
}

}  // namespace wb::cli
