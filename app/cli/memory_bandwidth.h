// A streaming read of main memory with the engine's threads, so `bench` can state how close decode
// comes to what this machine can read (decode of a model larger than the caches is a read of every
// weight per token, so this is its ceiling).
#pragma once

#include <cstdint>

namespace wb::cli {

struct MemoryBandwidth {
  double read_gb_per_s = 0;  // best of the passes, 1e9 bytes per second
  uint64_t buffer_bytes = 0;
  int threads = 0;
};

// Reads a buffer of `buffer_bytes` (0: four times the last-level cache, at least 1 GiB, so no pass is
// served from cache) split in one contiguous slice per thread, `passes` times; each thread first
// writes its own slice, so the pages sit on its memory node.
MemoryBandwidth measure_read_bandwidth(int threads, uint64_t buffer_bytes = 0, int passes = 5);

}  // namespace wb::cli
