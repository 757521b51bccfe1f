// LoRA adapters of a TrainModel (internal): for each targeted linear-weight group and layer, A (r, C) and
// B (OC, r), so that the layer computes y = x W^T + b + scale * (dropout(x) A^T) B^T, scale = alpha / r.
//
// Invariants: A and B of every (target, layer) live in one arena `values` with a parallel `grads`, so the
// optimizer sees one TrainableTensor per target and matrix ("lora.h.qkv.A" with shape (r, C) per layer).
// A starts Kaiming-uniform (PEFT's init: U(-1/sqrt(C), 1/sqrt(C))) and B at zero, so a fresh adapter
// changes nothing. The adapter-dropout mask is a function of its seed (dropout_mask.h), never stored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/model.h"
#include "engine/train/train_model.h"

namespace engine {

struct LoraTarget {
  std::string group;                    // our group name, e.g. "h.qkv.weight"
  int C = 0, OC = 0;                    // the base weight is (OC, C)
  uint64_t a_offset = 0, b_offset = 0;  // of layer 0's A and B in the arena; layers follow at a/b_stride
  uint64_t a_stride = 0, b_stride = 0;
};

class LoraAdapters {
 public:
  // Validates config.targets (empty: PEFT's defaults, c_attn for GPT-2, q_proj + v_proj for Llama) and
  // initialises the adapters deterministically from config.seed.
  LoraAdapters(const Model& model, const LoraConfig& config);

  // The adapter index of a group, or -1 when the group has none.
  int find(const std::string& group) const;
  const std::vector<LoraTarget>& targets() const { return m_targets; }
  int rank() const { return m_rank; }
  float scale() const { return m_scale; }

  float* A(int t, int l) { return m_values.data() + m_targets[t].a_offset + l * m_targets[t].a_stride; }
  float* B(int t, int l) { return m_values.data() + m_targets[t].b_offset + l * m_targets[t].b_stride; }
  float* dA(int t, int l) { return m_grads.data() + m_targets[t].a_offset + l * m_targets[t].a_stride; }
  float* dB(int t, int l) { return m_grads.data() + m_targets[t].b_offset + l * m_targets[t].b_stride; }
  std::vector<float>& grads() { return m_grads; }

  // One TrainableTensor per target and matrix: "lora.<group without .weight>.A" / ".B".
  std::vector<TrainableTensor> trainable();

  // Scratch for N rows; must be called before forward/backward with that N.
  void reserve(int N, int L);

  // out (N, OC) += scale * (dropout(x) A^T) B^T; keeps x A^T for the backward. p: adapter dropout.
  void forward(Backend& be, int t, int l, float* out, const float* x, int N, float p, uint64_t seed);
  // dx (N, C) += the adapter path's input gradient; dA, dB += their gradients; dout (N, OC).
  void backward(Backend& be, int t, int l, float* dx, const float* dout, const float* x, int N, float p, uint64_t seed);

  // W += scale * B A for every target and layer, then B = 0 (the function is unchanged either way).
  void merge_into(Model& model);
  // W += scale * B A for every target and layer, adapters kept: the merged weights the inference forward
  // (sampling, generation) runs while the training forward keeps computing the adapter path separately.
  void add_delta_into(Model& model) const;
  // The base weights of every target, as (group, layer-0 pointer, element count): what must be saved to undo
  // add_delta_into exactly (subtracting would not restore the bits).
  struct TargetSpan {
    float* data;
    uint64_t numel;
  };
  std::vector<TargetSpan> target_weights(Model& model) const;

 private:
  float* xa(int t, int l, int N) { return m_xa.data() + (static_cast<uint64_t>(t) * m_layers + l) * N * m_rank; }

  std::vector<LoraTarget> m_targets;
  int m_rank = 0, m_layers = 0;
  float m_scale = 1.0f;
  std::vector<float> m_values, m_grads;
  std::vector<float> m_xa;  // (targets, L, N, r): x A^T of the last forward
  std::vector<float> m_xd, m_dxd, m_tmp,
      m_dxa;  // scratch: dropped input and its gradient (N, maxC), (N, maxOC), (N, r)
};

}  // namespace engine
