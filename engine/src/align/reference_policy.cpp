// The frozen reference policy: see engine/align/reference_policy.h.
#include "engine/align/reference_policy.h"

#include <algorithm>

#include "engine/align/preference_losses.h"
#include "engine/error.h"
#include "engine/model.h"

namespace engine {

std::unique_ptr<ReferencePolicy> ReferencePolicy::lora_base(TrainModel& policy) {
  if (policy.lora_config().rank <= 0) throw Error("reference policy: the model has no LoRA adapters to switch off");
  std::unique_ptr<ReferencePolicy> r(new ReferencePolicy());
  r->m_lora_policy = &policy;
  return r;
}

std::unique_ptr<ReferencePolicy> ReferencePolicy::copy_of(Model& model, Backend& backend) {
  if (model.has_external_weights())
    throw Error("reference policy: the model must have every weight in f32 (load it with dequantize)");
  std::unique_ptr<ReferencePolicy> r(new ReferencePolicy());
  // The parameter layout is a function of the config alone, so the arenas line up float for float.
  r->m_copy = std::make_unique<Model>(model.config());
  const std::span<float> src = model.all_params();
  std::copy(src.begin(), src.end(), r->m_copy->all_params().begin());
  r->m_frozen = std::make_unique<TrainModel>(*r->m_copy, backend, TrainModel::Frozen{});
  return r;
}

ReferencePolicy::~ReferencePolicy() = default;

std::vector<float> ReferencePolicy::token_logprobs(const BatchView& batch) {
  return m_lora_policy ? m_lora_policy->token_logprobs(batch, /*use_adapters=*/false) : m_frozen->token_logprobs(batch);
}

std::vector<float> ReferencePolicy::sequence_logprobs(const BatchView& batch) {
  return engine::sequence_logprobs(token_logprobs(batch), batch.B, batch.T);
}

}  // namespace engine
