// CPU embedding and rotary-position ops, forward beside backward (shapes and accumulate rules: backend.h).
//
// The rotary backward is the forward turned by the opposite angle (the rotation is orthogonal), so one
// function serves both.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/cpu_ops.h"

namespace engine::cpu {

void encoder_forward(ThreadPool&, float* out, const int32_t* tokens, const float* wte, const float* wpe, int pos0,
                     int T, int C) {
  for (int t = 0; t < T; ++t) {
    const float* te = wte + static_cast<int64_t>(tokens[t]) * C;
    float* o = out + static_cast<int64_t>(t) * C;
    if (wpe) {
      const float* pe = wpe + static_cast<int64_t>(pos0 + t) * C;
      for (int i = 0; i < C; ++i) o[i] = te[i] + pe[i];
    } else {
      std::memcpy(o, te, sizeof(float) * C);
    }
  }
}

void encoder_backward(ThreadPool& pool, float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                      int T, int C) {
  const int64_t N = static_cast<int64_t>(B) * T;
  for_column_blocks(pool, C, [&](int64_t c0, int64_t c1) {
    for (int64_t n = 0; n < N; ++n) {
      const float* d = dout + n * C;
      float* te = dwte + static_cast<int64_t>(tokens[n]) * C;
      for (int64_t i = c0; i < c1; ++i) te[i] += d[i];
      if (dwpe) {
        float* pe = dwpe + (n % T) * C;
        for (int64_t i = c0; i < c1; ++i) pe[i] += d[i];
      }
    }
  });
}

void rope_rotate(ThreadPool& pool, float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS,
                 int pos0, float theta, bool interleaved, float sign) {
  const int half = HS / 2;
  // cos/sin per (row, pair), shared by every head of q and k. Angles in double: pos * freq reaches
  // ~1e6 radians at long contexts, where float would lose the fractional part.
  std::vector<float> cs(static_cast<size_t>(T) * half), sn(cs.size());
  for (int i = 0; i < half; ++i) {
    const double freq = std::pow(static_cast<double>(theta), -2.0 * i / HS);
    for (int t = 0; t < T; ++t) {
      const double a = static_cast<double>(pos0 + t) * freq;
      cs[static_cast<size_t>(t) * half + i] = static_cast<float>(std::cos(a));
      sn[static_cast<size_t>(t) * half + i] = static_cast<float>(sign * std::sin(a));
    }
  }
  // Pair i of a head is (x[i*step], x[i*step + off]): step 1, off HS/2 for rotate-half; step 2, off 1
  // interleaved.
  const int step = interleaved ? 2 : 1, off = interleaved ? 1 : half;
  auto rotate_rows = [&](float* x, int stride, int heads) {
    pool.parallel_for(T, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const float* c = cs.data() + t * half;
        const float* s = sn.data() + t * half;
        for (int h = 0; h < heads; ++h) {
          float* v = x + t * stride + static_cast<int64_t>(h) * HS;
          for (int i = 0; i < half; ++i) {
            const float a = v[i * step], b = v[i * step + off];
            v[i * step] = a * c[i] - b * s[i];
            v[i * step + off] = b * c[i] + a * s[i];
          }
        }
      }
    });
  };
  rotate_rows(q, q_stride, NH);
  if (k) rotate_rows(k, k_stride, KVH);
}

}  // namespace engine::cpu
