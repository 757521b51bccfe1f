// Reward-model and DPO objectives: see engine/align/preference_objectives.h.
#include "engine/align/preference_objectives.h"

#include <cmath>
#include <span>
#include <string>

#include "engine/align/preference_losses.h"
#include "engine/align/reference_policy.h"
#include "engine/error.h"

namespace engine {

namespace {

int pairs_of(const Batch& batch) {
  if (batch.B < 2 || batch.B % 2 != 0)
    throw Error("preference batch: " + std::to_string(batch.B) + " rows are not chosen/rejected pairs");
  return batch.B / 2;
}

ObjectiveResult reward_result(const BradleyTerryResult& bt, int P) {
  ObjectiveResult r;
  r.loss = bt.loss;
  r.weight = P;
  r.metrics = {{"accuracy", bt.accuracy}, {"margin", bt.margin}};
  return r;
}

ObjectiveResult dpo_result(const DpoResult& d, int P) {
  ObjectiveResult r;
  r.loss = d.loss;
  r.weight = P;
  r.metrics = {{"rewards/chosen", d.rewards_chosen}, {"rewards/rejected", d.rewards_rejected},
               {"rewards/margins", d.margins},       {"rewards/accuracies", d.accuracies},
               {"logps/chosen", d.logps_chosen},     {"logps/rejected", d.logps_rejected}};
  return r;
}

}  // namespace

std::vector<float> initial_reward_head(int n_embd, uint64_t seed) {
  std::vector<float> w(static_cast<size_t>(n_embd));
  uint64_t state = seed ^ 0x5C0BE5EEDull;
  auto uniform = [&] { return (double(splitmix64_next(state) >> 11) + 0.5) / 9007199254740992.0; };  // (0, 1)
  for (float& x : w) {
    // Box-Muller: one normal draw from two uniforms (our own generator: the same on every standard library).
    const double u1 = uniform(), u2 = uniform();
    x = static_cast<float>(0.02 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  return w;
}

std::vector<float> last_token_values(const std::vector<float>& values, const Batch& batch) {
  if (batch.lengths.size() != size_t(batch.B))
    throw Error("preference batch: the loader gave no row lengths (a reward model scores each row's last token)");
  std::vector<float> out(size_t(batch.B));
  for (int b = 0; b < batch.B; ++b) {
    const int32_t len = batch.lengths[size_t(b)];
    if (len < 1 || len > batch.T) throw Error("preference batch: row " + std::to_string(b) + " has no token");
    out[size_t(b)] = values[size_t(b) * size_t(batch.T) + size_t(len - 1)];
  }
  return out;
}

ObjectiveResult RewardModelObjective::forward_backward(TrainModel& model, const Batch& batch,
                                                       const TrainStepOptions& options, float grad_scale) {
  const int P = pairs_of(batch);
  const std::vector<float> values = model.forward_scalar_head(batch.view(), options);
  const std::vector<float> r = last_token_values(values, batch);
  const BradleyTerryResult bt =
      bradley_terry_loss(std::span(r).first(size_t(P)), std::span(r).subspan(size_t(P), size_t(P)));
  std::vector<float> dvalues(values.size(), 0.0f);
  for (int i = 0; i < P; ++i) {
    dvalues[size_t(i) * size_t(batch.T) + size_t(batch.lengths[size_t(i)] - 1)] = grad_scale * bt.d_chosen[size_t(i)];
    const size_t j = size_t(P + i);
    dvalues[j * size_t(batch.T) + size_t(batch.lengths[j] - 1)] = grad_scale * bt.d_rejected[size_t(i)];
  }
  model.backward_scalar_head(dvalues.data());
  return reward_result(bt, P);
}

ObjectiveResult RewardModelObjective::evaluate(TrainModel& model, const Batch& batch) {
  const int P = pairs_of(batch);
  const std::vector<float> r = last_token_values(model.scalar_head_values(batch.view()), batch);
  return reward_result(bradley_terry_loss(std::span(r).first(size_t(P)), std::span(r).subspan(size_t(P), size_t(P))),
                       P);
}

DpoObjective::DpoObjective(ReferencePolicy& reference, double beta) : m_ref(reference), m_beta(beta) {
  if (!(beta > 0) || !std::isfinite(beta)) throw Error("DPO: beta must be > 0");
}

ObjectiveResult DpoObjective::forward_backward(TrainModel& model, const Batch& batch, const TrainStepOptions& options,
                                               float grad_scale) {
  const int P = pairs_of(batch);
  // The reference first: with LoRA it runs the policy's own base weights, which overwrites the activations
  // the policy's backward needs.
  const std::vector<float> ref = m_ref.sequence_logprobs(batch.view());
  const std::vector<float> tok = model.forward_token_logprobs(batch.view(), options);
  const std::vector<float> pol = sequence_logprobs(tok, batch.B, batch.T);
  const std::span<const float> ps(pol), rs(ref);
  const DpoResult d =
      dpo_loss(ps.first(size_t(P)), ps.subspan(size_t(P)), rs.first(size_t(P)), rs.subspan(size_t(P)), m_beta);
  // d loss / d logp of a token = d loss / d (its row's sum); the backward ignores positions that do not count.
  std::vector<float> dlogp(tok.size());
  for (int b = 0; b < batch.B; ++b) {
    const float g = grad_scale * (b < P ? d.d_chosen[size_t(b)] : d.d_rejected[size_t(b - P)]);
    std::fill_n(dlogp.begin() + int64_t(b) * batch.T, batch.T, g);
  }
  model.backward_token_logprobs(dlogp.data());
  return dpo_result(d, P);
}

ObjectiveResult DpoObjective::evaluate(TrainModel& model, const Batch& batch) {
  const int P = pairs_of(batch);
  const std::vector<float> ref = m_ref.sequence_logprobs(batch.view());
  const std::vector<float> pol = sequence_logprobs(model.token_logprobs(batch.view()), batch.B, batch.T);
  const std::span<const float> ps(pol), rs(ref);
  return dpo_result(dpo_loss(ps.first(size_t(P)), ps.subspan(size_t(P)), rs.first(size_t(P)), rs.subspan(size_t(P)),
                             m_beta),
                    P);
}

}  // namespace engine
