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

// The scalars of one AdamW step (engine/train/adamw.h), formed once per step in double and rounded to
// float where they meet float tensors, as PyTorch forms them from Python floats.
struct AdamWStep {
  float neg_step_size = 0;    // -lr / (1 - beta1^t)
  float bc2_sqrt = 1;         // sqrt(1 - beta2^t)
  float decay = 1;            // 1 - lr * weight_decay
  float one_minus_beta1 = 0;  // (float)(1 - beta1): 0.1f, where 1 - 0.9f would be 0.100000024f
  float beta2 = 0;
  float one_minus_beta2 = 0;
  float eps = 0;
  bool decays = false;  // weight_decay != 0 for this tensor
};

// The AdamW rule on elements [0, n) of host buffers, in PyTorch's order and association (decay, moments,
// then the step): the reference every backend's Backend::adamw_update equals float for float.
void adamw_update_host(float* params, const float* grads, float* m, float* v, int64_t n, const AdamWStep& s);
// Sum of p[i]^2 over host memory, accumulated in double.
double sum_squares_host(const float* p, int64_t n);

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;         // "CPU" or "CUDA"
  virtual std::string description() const = 0;  // e.g. "CPU, 2 threads, OpenBLAS"
  virtual int threads() const { return 1; }

  // out (T,C) = wte[tokens[t]] + wpe[pos0 + t]; wpe may be null (rotary models).
  virtual void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int pos0, int T,
                               int C) = 0;

  // The same with wte in any encoding: only the T rows asked for are widened (a quantized embedding
  // table is never expanded as a whole).
  virtual void encoder_forward_typed(float* out, const int32_t* tokens, const WeightRef& wte, const float* wpe,
                                     int pos0, int T, int C);

  // out (N,C) = (inp - mean) * rstd * weight + bias per row; mean/rstd (N) may be null.
  virtual void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                 const float* bias, int N, int C, float eps) = 0;

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
  virtual void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C,
                              int OC) = 0;

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
  virtual void attention_forward(float* out, const float* q, int q_stride, const float* k_cache, const float* v_cache,
                                 int P, int T, int NH, int KVH, int HS, float* att_probs) = 0;

  // GPT-2's tanh approximation of GELU, elementwise over n values.
  virtual void gelu_forward(float* out, const float* inp, int64_t n) = 0;

  // out = a + b, elementwise (out may alias a).
  virtual void residual_forward(float* out, const float* a, const float* b, int64_t n) = 0;

  // Copies `rows` rows of `cols` floats from src (row stride src_stride) to dst (row stride dst_stride).
  virtual void copy_rows(float* dst, int dst_stride, const float* src, int src_stride, int rows, int cols) = 0;

  // ---- Training (engine/src/cpu/) ----
  // Backward ops ADD into every gradient buffer they are given (llm.c's convention: a tensor used twice,
  // such as a tied embedding or a norm output read by three projections, collects both gradients);
  // the caller zeroes them. Exceptions are marked "overwrites". The defaults throw engine::Error
  // naming the op, so a backend without training support fails clearly instead of computing nothing.
  // Training batches are B sequences of T tokens, N = B*T rows, each sequence at positions 0..T-1.

  // p[0..n) = 0.
  virtual void fill_zero(float* p, int64_t n);

  // The optimizer's and the gradient norm's whole-buffer ops (engine/train/adamw.h, grad_clip.h). Each
  // element is computed on its own (sum_squares adds per-range double partial sums), so a backend may
  // split the range in any way. The defaults run the host functions above on one thread.
  virtual void adamw_update(float* params, const float* grads, float* m, float* v, int64_t n, const AdamWStep& s);
  // Sum of p[i]^2 in double; a NaN or infinity anywhere makes it non-finite.
  virtual double sum_squares(const float* p, int64_t n);
  // p[i] *= a.
  virtual void scale(float* p, float a, int64_t n);

  // dwte (V,C) row tokens[n] += dout[n]; dwpe (maxT,C) row (n % T) += dout[n]; dwpe may be null.
  // dout (B*T, C), tokens (B*T).
  virtual void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T,
                                int C);

  // Gradient of layernorm_forward. dinp (N,C), dweight (C), dbias (C) (dweight, dbias may be null); dout, inp (N,C);
  // mean, rstd (N) as layernorm_forward wrote them.
  virtual void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                                  const float* weight, const float* mean, const float* rstd, int N, int C);

  // Gradient of rmsnorm_forward. dinp (N,C), dweight (C; may be null); dout, inp (N,C); rstd (N) from the forward.
  virtual void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                                const float* rstd, int N, int C);

  // Gradient of matmul_forward: dinp (N,C) += dout @ weight; dweight (OC,C) += dout^T @ inp;
  // dbias (OC) += column sums of dout. dinp, dweight and dbias may each be null (not wanted).
  virtual void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                               const float* weight, int N, int C, int OC);

  // Gradient of rope_forward over T rows at positions pos0..: the rotation is orthogonal, so dq and dk
  // (same layout and strides as q and k) are turned back by the same angles, in place (overwrites).
  virtual void rope_backward(float* dq, int q_stride, int NH, float* dk, int k_stride, int KVH, int T, int HS, int pos0,
                             float theta, bool interleaved);

  // dinp (n) += gelu'(inp) * dout (GPT-2's tanh approximation).
  virtual void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n);

  // out = silu(gate) * up: dgate += dout * up * silu'(gate), dup += dout * silu(gate).
  virtual void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                               int64_t n);

  // y (n) += a * x (LoRA's scaled adapter path).
  virtual void axpy(float* y, float a, const float* x, int64_t n);

  // out = a + b: da += dout, db += dout (either may be null).
  virtual void residual_backward(float* da, float* db, const float* dout, int64_t n);

  // Inverted dropout, out = inp * keep / (1 - p), where keep is a pure function of (seed, index) (a
  // counter-based hash, engine/src/cpu/dropout_mask.h), so backward and a recomputed forward see the same
  // mask without storing it. p = 0 copies. out may alias inp.
  virtual void dropout_forward(float* out, const float* inp, int64_t n, float p, uint64_t seed);
  // dinp = dout * keep / (1 - p) with the mask of the same (seed, p) (overwrites; dinp may alias dout).
  virtual void dropout_backward(float* dinp, const float* dout, int64_t n, float p, uint64_t seed);

  // Training attention: B causal sequences of T tokens, no KV cache; the math of attention_forward.
  // q rows (B*T, NH*HS) with stride q_stride; k, v rows (B*T, KVH*HS) with stride kv_stride (GPT-2's
  // fused qkv rows are read in place); out (B*T, NH*HS). att (B,NH,T,T) receives the softmax
  // probabilities (zero above the diagonal) BEFORE dropout; with p > 0 the probabilities that multiply
  // v are dropped with the mask of (seed, index into att).
  virtual void attention_train_forward(float* out, float* att, const float* q, int q_stride, const float* k,
                                       const float* v, int kv_stride, int B, int T, int NH, int KVH, int HS,
                                       float dropout, uint64_t seed);
  // Its gradient: dq (stride q_stride), dk, dv (stride kv_stride) += ; dout (B*T, NH*HS); att, q, k, v,
  // dropout and seed as in the forward.
  virtual void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* att, const float* q,
                                  int q_stride, const float* k, const float* v, int kv_stride, int B, int T, int NH,
                                  int KVH, int HS, float dropout, uint64_t seed);

  // Fused softmax + cross-entropy. logits (N,V) are turned into probabilities in place; losses (N)
  // receives per row (1-e) * -log p[target] + e * mean over v of -log p[v] (e = label_smoothing,
  // PyTorch's CrossEntropyLoss(label_smoothing=e)), and 0 for rows whose target is negative. entropy (N),
  // when not null, receives the entropy of each row's distribution, H = logsumexp(z) - sum_v p_v z_v,
  // computed from the logits (0 for rows whose target is negative).
  virtual void softmax_xent_forward(float* losses, float* entropy, float* logits, const int32_t* targets, int N, int V,
                                    float label_smoothing);
  // dlogits (N,V) = dlosses[n] * (probs - ((1-e) onehot(target) + e/V)) + dentropy[n] * dH/dz, with
  // dH/dz_v = -p_v (log p_v + entropy[n]) (the entropy of the forward); 0 for negative targets. dentropy null
  // (then entropy is not read): the loss term alone. Overwrites; dlogits may alias probs.
  virtual void softmax_xent_backward(float* dlogits, const float* probs, const int32_t* targets, const float* dlosses,
                                     const float* entropy, const float* dentropy, int N, int V, float label_smoothing);

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
  bool usable = false;  // a device exists and a cuBLAS handle could be created on it
  std::string device_name;
  std::string detail;  // why not usable, when it is not
};
CudaProbe probe_cuda();

// Runs the CUDA smoke kernel on device 0 and checks its result: "" on success, else what failed.
std::string run_cuda_smoke_test();

}  // namespace engine
