// Backend: the operations a transformer needs, one function per op, over flat f32 buffers that
// live in the backend's memory. The model's forward pass is written once against this interface;
// the CPU backend implements it with BLAS + threads, the CUDA backend with kernels/ + cuBLAS.
//
// Shape letters (defined in model.h): N = number of rows (B*T), C = channels, OC = output channels,
// T = new tokens this step, P = tokens already in the KV cache (pos0), NH = query heads,
// KVH = key/value heads, HS = head size.
// Weights are stored (OC, C) row-major, so y = x W^T + b: a row of W is one output's weights.
// The *_typed ops take a WeightRef (f32 or a file encoding: f16, q8_0, q4_0, q4_K, q6_K, bf16). Their
// defaults here work for any backend whose buffers are host memory: f32 goes to the plain op, other
// encodings are widened to f32 per call (correct, not fast); the CPU backend overrides the matmul
// with kernels that read the encoded weights directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/weight_ref.h"

namespace engine {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;         // "CPU" or "CUDA"
  virtual std::string description() const = 0;  // e.g. "CPU, 2 threads, OpenBLAS"
  virtual int threads() const { return 1; }

  // out (T,C) = wte[tokens[t]] + wpe[pos0 + t]; wpe may be null (rotary models).
  virtual void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                               int pos0, int T, int C) = 0;

  // The same with wte in any encoding: only the T rows asked for are widened (a quantized embedding
  // table is never expanded as a whole).
  virtual void encoder_forward_typed(float* out, const int32_t* tokens, const WeightRef& wte, const float* wpe,
                                     int pos0, int T, int C);

  // out (N,C) = (inp - mean) * rstd * weight + bias per row; mean/rstd (N) may be null.
  virtual void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                                 const float* weight, const float* bias, int N, int C, float eps) = 0;

  // out (N,C) = inp * rstd * weight per row, rstd = 1/sqrt(mean(inp^2) + eps); rstd (N) may be null.
  // out may alias inp.
  virtual void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                               float eps) = 0;

  // Rotary position embedding, in place, of the T rows of q (T, NH*HS; row stride q_stride floats) and
  // k (T, KVH*HS; row stride k_stride; may be null) at positions pos0 .. pos0+T-1. Every head's pair i
  // (i < HS/2) turns by angle pos * theta^(-2i/HS); the rotary dimension is HS. Pair i is
  // (x[i], x[i+HS/2]) (HF "rotate half") or, when `interleaved`, (x[2i], x[2i+1]) (GGUF / Meta).
  virtual void rope_forward(float* q, int q_stride, int NH, float* k, int k_stride, int KVH, int T, int HS, int pos0,
                            float theta, bool interleaved) = 0;

  // out = silu(gate) * up elementwise over n values, silu(x) = x / (1 + exp(-x)); out may alias gate or up.
  virtual void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) = 0;

  // out (N,OC) = inp (N,C) @ weight(OC,C)^T + bias (OC); bias may be null.
  virtual void matmul_forward(float* out, const float* inp, const float* weight, const float* bias,
                              int N, int C, int OC) = 0;

  // The same with the weight in any encoding. f32 weights must give exactly matmul_forward's result
  // (every backend's override keeps that, so f32 models compute bit for bit as before). Quantized
  // weights on the CPU round inp to int8 per 32 values when N == 1 (see engine/quant.h).
  virtual void matmul_forward_typed(float* out, const float* inp, const WeightRef& weight, const float* bias, int N,
                                    int C, int OC);

  // Causal attention of T new queries against P cached + T new keys.
  // q (T, NH*HS) with row stride q_stride floats; k_cache, v_cache (P+T, KVH*HS) hold all keys and
  // values including the new ones; out (T, NH*HS). Query head h reads key/value head h / (NH/KVH).
  // att_probs, when not null, receives the post-softmax probabilities (NH, T, P+T), zero above the
  // causal diagonal.
  virtual void attention_forward(float* out, const float* q, int q_stride, const float* k_cache,
                                 const float* v_cache, int P, int T, int NH, int KVH, int HS,
                                 float* att_probs) = 0;

  // GPT-2's tanh approximation of GELU, elementwise over n values.
  virtual void gelu_forward(float* out, const float* inp, int64_t n) = 0;

  // out = a + b, elementwise (out may alias a).
  virtual void residual_forward(float* out, const float* a, const float* b, int64_t n) = 0;

  // Copies `rows` rows of `cols` floats from src (row stride src_stride) to dst (row stride dst_stride).
  virtual void copy_rows(float* dst, int dst_stride, const float* src, int src_stride, int rows, int cols) = 0;

 private:
  std::vector<float> m_widened;  // scratch of the default *_typed ops
};

// Which backend runs, and why (shown in the UI and by the CLI).
struct BackendChoice {
  std::unique_ptr<Backend> backend;
  std::string reason;  // e.g. "CPU: no CUDA device found" or "CUDA: NVIDIA H200 (sm_90)"
};

enum class BackendPreference { Auto, Cpu, Cuda };

// Picks CUDA when built with it and a device exists, else CPU. `threads` <= 0: all cores.
BackendChoice choose_backend(BackendPreference pref = BackendPreference::Auto, int threads = 0);

std::unique_ptr<Backend> make_cpu_backend(int threads = 0);

// What the CUDA side of this build can see, without choosing anything.
struct CudaProbe {
  bool compiled_in = false;  // built with WB_WITH_CUDA and nvcc
  int device_count = 0;
  bool usable = false;       // a device exists and a cuBLAS handle could be created on it
  std::string device_name;
  std::string detail;        // why not usable, when it is not
};
CudaProbe probe_cuda();

// Runs the CUDA smoke kernel on device 0 and checks its result: "" on success, else what failed.
std::string run_cuda_smoke_test();

}  // namespace engine
