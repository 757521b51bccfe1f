// Shared pieces of the whole-model training tests (test_train_*.cpp): the fixture's batch, PyTorch's
// gradients brought into our parameter layout, and the AdamW the fixtures were written with.
#pragma once

#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "engine/train/train_model.h"

// The fixture's next-token batch: inputs = input_ids (B,T); targets = input_ids shifted left by one, the
// last position of each row -1 (HF's shift: B*(T-1) predicted tokens).
struct ShiftedBatch {
  std::vector<int32_t> inputs, targets;
  int B = 0, T = 0;
  engine::BatchView view(const float* weights = nullptr) const {
    return {inputs.data(), targets.data(), weights, B, T};
  }
};

inline ShiftedBatch shifted_batch(const engine::io::SafetensorsFile& expected) {
  const engine::io::StTensor* ids = expected.find("input_ids");
  ShiftedBatch b;
  b.B = static_cast<int>(ids->shape[0]);
  b.T = static_cast<int>(ids->shape[1]);
  b.inputs.resize(size_t(b.B) * b.T);
  std::memcpy(b.inputs.data(), ids->data, b.inputs.size() * 4);
  b.targets.assign(b.inputs.size(), -1);
  for (int r = 0; r < b.B; ++r)
    for (int t = 0; t + 1 < b.T; ++t) b.targets[size_t(r) * b.T + t] = b.inputs[size_t(r) * b.T + t + 1];
  return b;
}

// PyTorch's gradients (tensors "grad.<HF name>" of `expected`) as a Model in our layout: they are written
// as a model.safetensors beside a copy of the fixture's config.json and read back by load_model, so the
// same name mapping and transposes that load the weights place the gradients.
inline std::unique_ptr<engine::Model> gradients_as_model(const std::string& fixture_dir,
                                                         const engine::io::SafetensorsFile& expected,
                                                         const QTemporaryDir& tmp) {
  namespace fs = std::filesystem;
  const std::string dir = tmp.path().toStdString() + "/grads";
  fs::create_directories(dir);
  fs::copy_file(fixture_dir + "/config.json", dir + "/config.json", fs::copy_options::overwrite_existing);
  std::vector<engine::io::StTensorToWrite> out;
  for (const auto& t : expected.tensors())
    if (t.name.rfind("grad.", 0) == 0) out.push_back({t.name.substr(5), t.dtype, t.shape, t.data});
  engine::io::write_safetensors(dir + "/model.safetensors", out);
  return engine::load_model(dir);
}

// |got - want| / max(1e-2, max |want|) over one tensor: relative to the tensor's scale, absolute for
// tensors whose gradient is (near) zero by construction.
inline double grad_rel_err(const float* got, const float* want, uint64_t n) {
  double worst = 0, scale = 1e-2;
  for (uint64_t i = 0; i < n; ++i) scale = std::max(scale, double(std::abs(want[i])));
  for (uint64_t i = 0; i < n; ++i) worst = std::max(worst, double(std::abs(got[i] - want[i])));
  return worst / scale;
}

// torch.optim.AdamW (no weight decay in the fixtures; decoupled decay when given), bias-corrected, one
// state per trainable tensor. Written here so the parity test needs nothing else of the training loop.
struct TestAdamW {
  float lr = 1e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.0f;
  std::vector<std::vector<float>> m, v;
  int t = 0;
  void step(std::vector<engine::TrainableTensor> params) {
    if (m.empty())
      for (const auto& p : params) {
        m.emplace_back(p.numel, 0.0f);
        v.emplace_back(p.numel, 0.0f);
      }
    ++t;
    const double c1 = 1 - std::pow(double(b1), t), c2 = 1 - std::pow(double(b2), t);
    for (size_t k = 0; k < params.size(); ++k) {
      auto& p = params[k];
      for (uint64_t i = 0; i < p.numel; ++i) {
        const float g = p.grad[i];
        m[k][i] = b1 * m[k][i] + (1 - b1) * g;
        v[k][i] = b2 * v[k][i] + (1 - b2) * g * g;
        if (p.weight_decay) p.value[i] -= lr * wd * p.value[i];
        p.value[i] -= static_cast<float>(lr * (m[k][i] / c1) / (std::sqrt(v[k][i] / c2) + eps));
      }
    }
  }
};
