// LoRA adapters (see lora_adapters.h): the adapter path as two small matmuls on the backend,
//   xa = dropout(x) A^T (N, r),  out += scale * xa B^T,
// and its backward, with dy = scale * dout:  dB += dy^T xa,  dxa = dy B,  dA += dxa^T dropout(x),
// dx += dropout_backward(dxa A).
#include "lora_adapters.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/checked.h"
#include "engine/error.h"

namespace engine {

namespace {

// (group, C, OC) of every linear-weight group an adapter may target.
struct Candidate {
  const char* group;
  int C, OC;
};

std::vector<Candidate> candidates(const ModelConfig& c) {
  const int C = c.n_embd, F = c.ffn_dim, KVW = c.kv_width();
  if (c.arch == Arch::GPT2)
    return {{"h.qkv.weight", C, 3 * C},
            {"h.attn_proj.weight", C, C},
            {"h.fc.weight", C, F},
            {"h.fc_proj.weight", F, C}};
  return {{"h.wq.weight", C, C},     {"h.wk.weight", C, KVW}, {"h.wv.weight", C, KVW},  {"h.wo.weight", C, C},
          {"h.w_gate.weight", C, F}, {"h.w_up.weight", C, F}, {"h.w_down.weight", F, C}};
}

}  // namespace

LoraAdapters::LoraAdapters(const Model& model, const LoraConfig& config) {
  const ModelConfig& c = model.config();
  if (config.rank <= 0 || config.rank > 4096) throw Error("LoRA rank must be in 1..4096");
  if (!(config.alpha > 0.0f) || !std::isfinite(config.alpha)) throw Error("LoRA alpha must be positive");
  if (!(config.dropout >= 0.0f && config.dropout < 1.0f)) throw Error("LoRA dropout must be in [0, 1)");
  m_rank = config.rank;
  m_layers = c.n_layer;
  m_scale = config.alpha / static_cast<float>(config.rank);
  std::vector<std::string> wanted = config.targets;
  if (wanted.empty())
    wanted = c.arch == Arch::GPT2 ? std::vector<std::string>{"h.qkv.weight"}
                                  : std::vector<std::string>{"h.wq.weight", "h.wv.weight"};
  const auto all = candidates(c);
  uint64_t offset = 0;
  for (const std::string& g : wanted) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Candidate& x) { return g == x.group; });
    if (it == all.end()) {
      std::string names;
      for (const auto& x : all) names += std::string(names.empty() ? "" : ", ") + x.group;
      throw Error("LoRA target '" + g + "' is not a linear layer of this " + arch_name(c.arch) +
                  " model (one of: " + names + ")");
    }
    if (find(g) >= 0) throw Error("LoRA target '" + g + "' is listed twice");
    LoraTarget t;
    t.group = g;
    t.C = it->C;
    t.OC = it->OC;
    t.a_stride = static_cast<uint64_t>(m_rank) * t.C;
    t.b_stride = static_cast<uint64_t>(t.OC) * m_rank;
    t.a_offset = offset;
    offset = checked_add(offset, checked_mul(t.a_stride, m_layers, "LoRA size"), "LoRA size");
    t.b_offset = offset;
    offset = checked_add(offset, checked_mul(t.b_stride, m_layers, "LoRA size"), "LoRA size");
    m_targets.push_back(t);
  }
  m_values.assign(offset, 0.0f);
  m_grads.assign(offset, 0.0f);
  std::mt19937_64 rng(config.seed);
  for (size_t t = 0; t < m_targets.size(); ++t) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(m_targets[t].C));
    std::uniform_real_distribution<float> u(-bound, bound);
    for (int l = 0; l < m_layers; ++l) {
      float* a = A(static_cast<int>(t), l);
      for (uint64_t i = 0; i < m_targets[t].a_stride; ++i) a[i] = u(rng);
    }
  }
}

int LoraAdapters::find(const std::string& group) const {
  for (size_t i = 0; i < m_targets.size(); ++i)
    if (m_targets[i].group == group) return static_cast<int>(i);
  return -1;
}

std::vector<TrainableTensor> LoraAdapters::trainable() {
  std::vector<TrainableTensor> out;
  for (const LoraTarget& t : m_targets) {
    const std::string base = "lora." + t.group.substr(0, t.group.size() - std::string(".weight").size());
    out.push_back({base + ".A",
                   {m_rank, t.C},
                   m_values.data() + t.a_offset,
                   m_grads.data() + t.a_offset,
                   t.a_stride * m_layers,
                   true});
    out.push_back({base + ".B",
                   {t.OC, m_rank},
                   m_values.data() + t.b_offset,
                   m_grads.data() + t.b_offset,
                   t.b_stride * m_layers,
                   true});
  }
  return out;
}

void LoraAdapters::reserve(int N, int L) {
  int maxC = 0, maxOC = 0;
  for (const auto& t : m_targets) {
    maxC = std::max(maxC, t.C);
    maxOC = std::max(maxOC, t.OC);
  }
  const uint64_t n = static_cast<uint64_t>(N);
  const uint64_t xa_size = checked_mul(checked_mul(m_targets.size() * static_cast<uint64_t>(L), n, "LoRA scratch"),
                                       static_cast<uint64_t>(m_rank), "LoRA scratch");
  if (m_xa.size() < xa_size) m_xa.resize(xa_size);
  if (m_xd.size() < n * maxC) m_xd.resize(n * maxC);
  if (m_dxd.size() < n * maxC) m_dxd.resize(n * maxC);
  if (m_tmp.size() < n * maxOC) m_tmp.resize(n * maxOC);
  if (m_dxa.size() < n * m_rank) m_dxa.resize(n * m_rank);
}

void LoraAdapters::forward(Backend& be, int t, int l, float* out, const float* x, int N, float p, uint64_t seed) {
  const LoraTarget& g = m_targets[t];
  const float* xd = x;
  if (p > 0.0f) {
    be.dropout_forward(m_xd.data(), x, static_cast<int64_t>(N) * g.C, p, seed);
    xd = m_xd.data();
  }
  float* xa_t = xa(t, l, N);
  be.matmul_forward(xa_t, xd, A(t, l), nullptr, N, g.C, m_rank);
  be.matmul_forward(m_tmp.data(), xa_t, B(t, l), nullptr, N, m_rank, g.OC);
  be.axpy(out, m_scale, m_tmp.data(), static_cast<int64_t>(N) * g.OC);
}

void LoraAdapters::backward(Backend& be, int t, int l, float* dx, const float* dout, const float* x, int N, float p,
                            uint64_t seed) {
  const LoraTarget& g = m_targets[t];
  const int64_t NOC = static_cast<int64_t>(N) * g.OC, NC = static_cast<int64_t>(N) * g.C;
  be.fill_zero(m_tmp.data(), NOC);
  be.axpy(m_tmp.data(), m_scale, dout, NOC);  // dy = scale * dout
  be.fill_zero(m_dxa.data(), static_cast<int64_t>(N) * m_rank);
  be.matmul_backward(m_dxa.data(), dB(t, l), nullptr, m_tmp.data(), xa(t, l, N), B(t, l), N, m_rank, g.OC);
  if (p > 0.0f) {
    be.dropout_forward(m_xd.data(), x, NC, p, seed);  // the forward's dropped input, recomputed
    be.fill_zero(m_dxd.data(), NC);
    be.matmul_backward(m_dxd.data(), dA(t, l), nullptr, m_dxa.data(), m_xd.data(), A(t, l), N, g.C, m_rank);
    be.dropout_backward(m_dxd.data(), m_dxd.data(), NC, p, seed);
    be.axpy(dx, 1.0f, m_dxd.data(), NC);
  } else {
    be.matmul_backward(dx, dA(t, l), nullptr, m_dxa.data(), x, A(t, l), N, g.C, m_rank);
  }
}

void LoraAdapters::add_delta_into(Model& model) const {
  // On the host arena: W[o][c] += scale * sum_k B[o][k] A[k][c].
  for (const LoraTarget& g : m_targets) {
    for (int l = 0; l < m_layers; ++l) {
      float* W = model.param_data(g.group) + static_cast<uint64_t>(l) * g.OC * g.C;
      const float* a = m_values.data() + g.a_offset + l * g.a_stride;
      const float* b = m_values.data() + g.b_offset + l * g.b_stride;
      for (int o = 0; o < g.OC; ++o)
        for (int k = 0; k < m_rank; ++k) {
          const float s = m_scale * b[static_cast<int64_t>(o) * m_rank + k];
          const float* ar = a + static_cast<int64_t>(k) * g.C;
          float* wr = W + static_cast<int64_t>(o) * g.C;
          for (int c = 0; c < g.C; ++c) wr[c] += s * ar[c];
        }
    }
  }
}

void LoraAdapters::merge_into(Model& model) {
  add_delta_into(model);
  for (size_t t = 0; t < m_targets.size(); ++t)
    for (int l = 0; l < m_layers; ++l) {
      float* b = B(static_cast<int>(t), l);
      std::fill(b, b + m_targets[t].b_stride, 0.0f);
    }
}

std::vector<LoraAdapters::TargetSpan> LoraAdapters::target_weights(Model& model) const {
  std::vector<TargetSpan> out;
  for (const LoraTarget& g : m_targets)
    out.push_back({model.param_data(g.group), static_cast<uint64_t>(m_layers) * g.OC * g.C});
  return out;
}

}  // namespace engine
