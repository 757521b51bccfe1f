// Micro-benchmark of the 256-bit x8 kernels (x8_kernels.h), for comparing two builds of them: the minimum
// time of many calls, decode (N = 1) and prefill (N = 16), one thread, C = OC = 2048, random weight bytes
// (the timing does not depend on the values). Not part of the build; for one commit's kernels:
//   Q=engine/src/cpu/quant; for f in matmul_x8_avx2 matmul_x8_q5_avx2; do
//     g++ -O3 -march=native -std=c++20 -Iengine/include -Iengine/src -c $Q/$f.cpp -o /tmp/$f.o; done
//   g++ -O3 -march=native -std=c++20 -Iengine/include -Iengine/src -I$Q tests/tools/bench_x8_kernels.cc \
//     /tmp/matmul_x8_avx2.o /tmp/matmul_x8_q5_avx2.o -o /tmp/bench_x8 && /tmp/bench_x8
// (-march=haswell -mtune=generic for the AVX2 set without VNNI; for the portable set, matmul_x8_portable and
// matmul_x8_q5_portable built with -march=x86-64 and -DX8_SET=x8_portable). Run two builds alternately.
#include "x8_kernels.h"

#ifndef X8_SET
#define X8_SET x8_avx2
#endif
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
using namespace engine::quant_detail;
template <typename F>
double best(F f, int reps) {
  double b = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    b = std::min(b, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return b;
}
int main() {
  const int C = 2048, OC = 2048, nb = C / 32;
  std::mt19937 rng(1);
  std::vector<uint8_t> W(size_t(OC) * C);  // more than any encoding needs
  for (auto& b : W) b = rng();
  for (int N : {1, 16}) {
    std::vector<int8_t> q(size_t(N) * C);
    for (auto& v : q) v = int8_t(rng());
    std::vector<float> d(size_t(N) * nb, 0.01f);
    std::vector<int32_t> sum(size_t(N) * nb, 3);
    ActRows X{q.data(), d.data(), sum.data(), nb};
    std::vector<float> out(size_t(N) * OC);
    struct K {
      const char* name;
      X8GroupsFn f;
    } ks[] = {{"q4_1", X8_SET::matmul_q4_1}, {"q5_0", X8_SET::matmul_q5_0}, {"q5_1", X8_SET::matmul_q5_1},
              {"q5_K", X8_SET::matmul_q5_K}, {"q4_0", X8_SET::matmul_q4_0}, {"q4_K", X8_SET::matmul_q4_K}};
    for (auto& k : ks) {
      const double t = best([&] { k.f(out.data(), W.data(), X, N, OC, 0, OC / 8); }, N == 1 ? 400 : 60);
      std::printf("N=%d %s %.1f us\n", N, k.name, t * 1e6);
    }
  }
}
