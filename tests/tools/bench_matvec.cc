// Hand-run microbenchmark (not built by CMake, not a test): single-thread matvec throughput in GB/s
// of weight bytes for f32 (simd_dot.h matvec_rows), f16, q8_0, q4_0, q4_K, q6_K at GPT-2 shapes. The .cc
// file lives in tests/tools, outside every glob. Build against a configured build dir:
//   g++ -O2 -march=native -std=c++20 -Iengine/include -Iengine/src tests/tools/bench_matvec.cc \
//       build/engine/libwb_engine.a -lopenblas -o /tmp/bench_matvec && /tmp/bench_matvec
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "engine/dtype.h"
#include "engine/quant.h"
#include "simd_dot.h"

namespace {

template <typename F>
double best_seconds(F&& f, double min_total = 0.5) {
  f();  // warm up: page in the weights, size the thread-local buffers
  double best = 1e30, total = 0;
  int reps = 0;
  while (total < min_total || reps < 5) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
    ++reps;
  }
  return best;
}

void bench(int OC, int C) {
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.f, 0.05f);
  std::vector<float> W((size_t)OC * C), x((size_t)C), out((size_t)OC);
  for (auto& v : W) v = dist(rng);
  for (auto& v : x) v = dist(rng) * 20;
  std::vector<uint16_t> Wh(W.size());
  for (size_t i = 0; i < W.size(); ++i) Wh[i] = engine::f32_to_fp16(W[i]);
  std::vector<uint8_t> W8((size_t)OC * C / 32 * engine::k_q8_0_bytes), W4((size_t)OC * C / 32 * engine::k_q4_0_bytes);
  engine::quantize_row_q8_0(W.data(), W8.data(), (int64_t)W.size());
  engine::quantize_row_q4_0(W.data(), W4.data(), (int64_t)W.size());

  // K types: random bytes are valid blocks once the f16 scales are sane.
  std::vector<uint8_t> WK4((size_t)OC * C / 256 * engine::k_q4_K_bytes),
      WK6((size_t)OC * C / 256 * engine::k_q6_K_bytes);
  for (auto& b : WK4) b = (uint8_t)rng();
  for (auto& b : WK6) b = (uint8_t)rng();
  const uint16_t dk = engine::f32_to_fp16(1e-3f);
  for (size_t s = 0; s < WK4.size() / engine::k_q4_K_bytes; ++s) {
    std::memcpy(&WK4[s * engine::k_q4_K_bytes], &dk, 2);
    std::memcpy(&WK4[s * engine::k_q4_K_bytes + 2], &dk, 2);
  }
  for (size_t s = 0; s < WK6.size() / engine::k_q6_K_bytes; ++s)
    std::memcpy(&WK6[s * engine::k_q6_K_bytes + 208], &dk, 2);

  struct Row {
    const char* name;
    double bytes;
    double s;
  };
  std::vector<Row> rows;
  rows.push_back({"f32 matvec_rows", W.size() * 4.0,
                  best_seconds([&] { engine::matvec_rows(out.data(), W.data(), x.data(), C, 0, OC); })});
  rows.push_back(
      {"f16", Wh.size() * 2.0, best_seconds([&] { engine::matvec_f16(out.data(), Wh.data(), x.data(), C, 0, OC); })});
  rows.push_back({"q8_0", (double)W8.size(),
                  best_seconds([&] { engine::matvec_q8_0(out.data(), W8.data(), x.data(), C, 0, OC); })});
  rows.push_back({"q4_0", (double)W4.size(),
                  best_seconds([&] { engine::matvec_q4_0(out.data(), W4.data(), x.data(), C, 0, OC); })});
  rows.push_back({"q4_K", (double)WK4.size(),
                  best_seconds([&] { engine::matvec_q4_K(out.data(), WK4.data(), x.data(), C, 0, OC); })});
  rows.push_back({"q6_K", (double)WK6.size(),
                  best_seconds([&] { engine::matvec_q6_K(out.data(), WK6.data(), x.data(), C, 0, OC); })});
  std::printf("%d x %d\n", OC, C);
  for (const auto& r : rows)
    std::printf("  %-16s %8.2f MB  %8.3f ms  %7.2f GB/s  %6.2f Gweights/s\n", r.name, r.bytes / 1e6, r.s * 1e3,
                r.bytes / r.s / 1e9, (double)OC * C / r.s / 1e9);
}

}  // namespace

int main() {
  bench(50257, 768);
  bench(3072, 768);
  bench(768, 3072);
}
