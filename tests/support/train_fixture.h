// Shared pieces of the whole-model training tests (test_train_*.cpp): the fixture's batch, PyTorch's
// gradients brought into our parameter layout, gradient checks and finite differences.
// The fixtures' loss curves use torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0):
// kFixtureAdamW with engine::AdamW (engine/train/adamw.h).
#pragma once

#include <QTemporaryDir>
#include <QtGlobal>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "engine/train/adamw.h"
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

// Every trainable tensor's gradient against `want`'s tensor of the same name (PyTorch's, from
// gradients_as_model); logs each error; returns "" or the first tensor over `tol` with its error.
inline std::string check_gradients(const std::vector<engine::TrainableTensor>& got, const engine::Model& want,
                                   double tol) {
  std::string failed;
  for (const auto& t : got) {
    const double e = grad_rel_err(t.grad, want.param_data(t.name), t.numel);
    qInfo("%-20s max |diff| / scale = %.2e", t.name.c_str(), e);
    if (e >= tol && failed.empty()) failed = t.name + ": " + std::to_string(e);
  }
  return failed;
}

// All gradients of a TrainModel, concatenated in trainable() order.
inline const engine::AdamWParams kFixtureAdamW{0.9, 0.95, 1e-8, 0.0};
constexpr float kFixtureLr = 1e-3f;

inline std::vector<float> flat_grads(engine::TrainModel& tm) {
  std::vector<float> g;
  for (const auto& t : tm.trainable()) g.insert(g.end(), t.grad, t.grad + t.numel);
  return g;
}

// (loss(x + h) - loss(x - h)) / 2h for one parameter value x, restored afterwards.
template <typename LossFn>
double central_difference(float& x, float h, LossFn&& loss) {
  const float x0 = x;
  x = x0 + h;
  const double lp = loss();
  x = x0 - h;
  const double lm = loss();
  x = x0;
  return (lp - lm) / (2.0 * h);
}
