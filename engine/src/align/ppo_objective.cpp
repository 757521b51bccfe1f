// The PPO objective: see engine/align/ppo_objective.h.
#include "engine/align/ppo_objective.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "engine/align/grpo_losses.h"
#include "engine/align/reference_policy.h"
#include "engine/align/reward_model.h"
#include "engine/align/rollouts.h"
#include "engine/error.h"

namespace engine {

// One step's rollout, per position of its R rows of T tokens (the per-token arrays hold 0 off the mask).
struct PpoObjective::Rollout {
  Rollouts samples;
  std::vector<uint8_t> mask;
  std::vector<float> old_logp, old_values, advantages, returns;
  std::vector<std::vector<int>> order;  // per epoch: the rows in minibatch order
  std::vector<double> ratio_means;      // per update so far
};

namespace {

constexpr const char* kStateKey = "kl_coef=";

// Rows `rows` of `src` (T per row) gathered into a new array.
template <class V>
V gather_rows(const V& src, const std::vector<int>& rows, int T) {
  V out;
  out.reserve(rows.size() * size_t(T));
  for (int r : rows)
    out.insert(out.end(), src.begin() + size_t(r) * size_t(T), src.begin() + size_t(r + 1) * size_t(T));
  return out;
}

// The permutation of R rows for epoch `epoch` of the step whose seed is `step_seed` (Fisher-Yates on splitmix64).
std::vector<int> epoch_order(int R, uint64_t step_seed, int epoch) {
  std::vector<int> order(static_cast<size_t>(R));
  std::iota(order.begin(), order.end(), 0);
  uint64_t s = step_seed ^ (uint64_t(epoch + 1) * 0xA0761D6478BD642Full);
  for (int i = R - 1; i > 0; --i) std::swap(order[size_t(i)], order[size_t(splitmix64_next(s) % uint64_t(i + 1))]);
  return order;
}

}  // namespace

void PpoOptions::validate() const {
  auto fail = [](const std::string& m) { throw Error("PPO: " + m); };
  auto finite_at_least = [](double v, double lo) { return std::isfinite(v) && v >= lo; };
  if (!(temperature > 0) || !std::isfinite(temperature)) fail("the temperature must be > 0");
  if (max_new_tokens < 1) fail("max new tokens must be >= 1");
  if (seq <= max_new_tokens + 1) fail("the sequence length must exceed max new tokens + 1");
  if (ppo_epochs < 1) fail("the PPO epochs must be >= 1");
  if (num_minibatches < 1) fail("the minibatches must be >= 1");
  if (!finite_at_least(kl_coef, 0)) fail("the KL coefficient must be >= 0");
  if (!finite_at_least(target_kl, 0)) fail("the target KL must be >= 0 (0: a fixed coefficient)");
  if (!(kl_horizon > 0) || !std::isfinite(kl_horizon)) fail("the KL horizon must be > 0");
  if (!(gamma >= 0 && gamma <= 1)) fail("gamma must be in [0, 1]");
  if (!(lam >= 0 && lam <= 1)) fail("lambda must be in [0, 1]");
  if (!(cliprange > 0 && cliprange < 1)) fail("the clip range must be in (0, 1)");
  if (!(cliprange_value > 0) || !std::isfinite(cliprange_value)) fail("the value clip range must be > 0");
  if (!finite_at_least(vf_coef, 0)) fail("the value loss coefficient must be >= 0");
  if (!finite_at_least(entropy_coef, 0)) fail("the entropy coefficient must be >= 0");
  if (samples_per_step < 0) fail("the samples per step must be >= 0");
}

PpoObjective::PpoObjective(ReferencePolicy& reference, Backend& backend, const ChatTemplate& tmpl, PromptSet train,
                           PromptSet val, const PpoOptions& options, RewardModel* reward_model)
    : m_ref(reference),
      m_backend(backend),
      m_reward_model(reward_model),
      m_stop(tmpl.stop_strings()),
      m_train(std::move(train)),
      m_val(std::move(val)),
      m_o(options) {
  m_o.validate();
  if (m_o.target_kl > 0) m_adaptive.emplace(m_o.kl_coef, m_o.target_kl, m_o.kl_horizon);
}

PpoObjective::~PpoObjective() = default;

ObjectiveResult PpoObjective::collect_rollout(TrainModel& model, const Batch& batch, const TrainStepOptions& options) {
  if (!model.has_scalar_head()) throw Error("PPO: the policy has no value head (set_scalar_head first)");
  const int R = batch.B, T = m_o.seq, M = m_o.num_minibatches;
  if (R % M != 0)
    throw Error("PPO: " + std::to_string(R) + " prompts per step do not split into " + std::to_string(M) +
                " minibatches");
  auto ro = std::make_unique<Rollout>();
  RolloutOptions opt;
  opt.temperature = m_o.temperature;
  opt.max_new_tokens = m_o.max_new_tokens;
  opt.seq = T;
  {
    const TrainModel::AdaptersInWeights adapted = model.adapters_in_weights();  // sample the LoRA policy
    ro->samples = sample_rollouts(model.model(), m_backend, m_stop, m_train, batch, opt, options.dropout_seed);
  }
  const Batch& rows = ro->samples.rows;
  ro->mask = ro->samples.completion_mask();

  std::vector<float> scores;
  if (m_reward_model) {
    for (int r = 0; r < R; ++r)
      scores.push_back(m_reward_model->score(ro->samples.items[size_t(r)]->prompt, ro->samples.texts[size_t(r)]));
  } else {
    scores = programmatic_rewards(ro->samples);
  }

  // The reference first, then the policy's log-probs and values, all forward only (nothing kept).
  const std::vector<float> ref = m_ref.token_logprobs(rows.view());
  std::vector<float> entropy;  // the policy's exact per-token entropy, for the metric only
  ro->old_logp = model.token_logprobs(rows.view(), /*use_adapters=*/true, &entropy);
  ro->old_values = model.scalar_head_values(rows.view());
  const size_t N = ro->mask.size();
  std::vector<float> kl(N, 0.0f);
  for (size_t i = 0; i < N; ++i) {
    if (!ro->mask[i]) {
      ro->old_values[i] = 0.0f;
      continue;
    }
    kl[i] = static_cast<float>(m_o.kl_estimator == KlEstimator::K1 ? k1_kl(ref[i], ro->old_logp[i])
                                                                   : k3_kl(ref[i], ro->old_logp[i]));
  }
  const double coef = kl_coef();
  const std::vector<float> rewards = ppo_token_rewards(kl, ro->mask, scores, R, T, coef);
  GaeResult g = gae(rewards, ro->old_values, ro->mask, R, T, m_o.gamma, m_o.lam);
  ro->advantages = whiten(g.advantages, ro->mask);
  ro->returns = std::move(g.returns);
  for (int e = 0; e < m_o.ppo_epochs; ++e) ro->order.push_back(epoch_order(R, options.dropout_seed, e));

  // Per completion: sums over its tokens, then means over the completions (TRL's .sum(1).mean()). TRL sums the
  // sampled tokens' -logp for the entropy; the exact entropies summed are its expectation, without the noise.
  double kl_sum = 0, entropy_sum = 0, score_sum = 0, length_sum = 0, eos = 0;
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      const size_t i = size_t(r) * size_t(T) + size_t(t);
      if (!ro->mask[i]) continue;
      kl_sum += kl[i];
      entropy_sum += entropy[i];
    }
    score_sum += scores[size_t(r)];
    length_sum += ro->samples.completion_tokens[size_t(r)];
    eos += ro->samples.ended[size_t(r)];
  }
  const double mean_kl = kl_sum / R, mean_score = score_sum / R;
  ObjectiveResult out;
  out.metrics = {{"objective/kl", mean_kl},
                 {"objective/entropy", entropy_sum / R},
                 {"objective/non_score_reward", -coef * mean_kl},
                 {"objective/rlhf_reward", mean_score - coef * mean_kl},
                 {"objective/scores", mean_score},
                 {"objective/kl_coef", coef},
                 {"val/num_eos_tokens", eos},
                 {"completion_length", length_sum / R}};
  for (int r = 0; r < std::min(R, m_o.samples_per_step); ++r)
    out.samples.push_back({ro->samples.items[size_t(r)]->prompt, ro->samples.texts[size_t(r)], scores[size_t(r)]});
  if (m_adaptive) m_adaptive->update(mean_kl, R);
  m_rollout = std::move(ro);
  return out;
}

ObjectiveResult PpoObjective::forward_backward_update(TrainModel& model, const Batch& batch,
                                                      const TrainStepOptions& options, float grad_scale, int update) {
  if (update < 0 || update >= updates_per_step())
    throw Error("PPO: update " + std::to_string(update) + " of a step of " + std::to_string(updates_per_step()));
  ObjectiveResult out;
  if (update == 0) out = collect_rollout(model, batch, options);
  if (!m_rollout) throw Error("PPO: an update before the step's rollout");
  Rollout& ro = *m_rollout;
  const int T = m_o.seq, M = m_o.num_minibatches, R = ro.samples.rows.B, mb_size = R / M;
  const std::vector<int>& order = ro.order[size_t(update / M)];
  const std::vector<int> rows(order.begin() + (update % M) * mb_size, order.begin() + (update % M + 1) * mb_size);

  Batch mb;
  mb.B = mb_size;
  mb.T = T;
  mb.inputs = gather_rows(ro.samples.rows.inputs, rows, T);
  mb.targets = gather_rows(ro.samples.rows.targets, rows, T);
  const std::vector<uint8_t> mask = gather_rows(ro.mask, rows, T);
  const std::vector<float> old_logp = gather_rows(ro.old_logp, rows, T);
  const std::vector<float> old_values = gather_rows(ro.old_values, rows, T);
  const std::vector<float> advantages = gather_rows(ro.advantages, rows, T);
  const std::vector<float> returns = gather_rows(ro.returns, rows, T);

  // The policy: clipped surrogate minus the entropy bonus (the exact entropy of its distributions, differentiated
  // through the logits only when the bonus is on).
  std::vector<float> entropy;
  const std::vector<float> logp = model.forward_token_logprobs(mb.view(), options, &entropy);
  PpoPolicyLoss pg = ppo_policy_loss(logp, old_logp, advantages, mask, m_o.cliprange);
  const MeanEntropy ent = mean_entropy(entropy, mask);
  std::vector<float> dlogp(logp.size()), dentropy;
  for (size_t i = 0; i < dlogp.size(); ++i) dlogp[i] = static_cast<float>(pg.dlogp[i] * grad_scale);
  if (m_o.entropy_coef > 0) {
    dentropy.resize(entropy.size());
    for (size_t i = 0; i < dentropy.size(); ++i)
      dentropy[i] = static_cast<float>(-m_o.entropy_coef * ent.dentropy[i] * grad_scale);
  }
  model.backward_token_logprobs(dlogp.data(), dentropy.empty() ? nullptr : dentropy.data());

  // The value head: clipped value loss, weighted by vf_coef.
  const std::vector<float> values = model.forward_scalar_head(mb.view(), options);
  PpoValueLoss vf = ppo_value_loss(values, old_values, returns, mask, m_o.cliprange_value);
  for (float& d : vf.dvalues) d = static_cast<float>(d * m_o.vf_coef * grad_scale);
  model.backward_scalar_head(vf.dvalues.data());

  out.loss = pg.loss + m_o.vf_coef * vf.loss - m_o.entropy_coef * ent.entropy;
  out.weight = mb_size;
  out.metrics["policy/clipfrac_avg"] = pg.clipfrac;
  out.metrics["policy/approxkl_avg"] = pg.approxkl;
  out.metrics["policy/entropy_avg"] = ent.entropy;
  out.metrics["loss/policy_avg"] = pg.loss;
  out.metrics["loss/value_avg"] = vf.loss;
  out.metrics["val/clipfrac_avg"] = vf.clipfrac;
  out.metrics["val/ratio"] = pg.ratio_mean;
  ro.ratio_means.push_back(pg.ratio_mean);
  if (update == updates_per_step() - 1) {
    // The spread of the minibatches' mean ratios over the step (unbiased; 0 with one update).
    const size_t n = ro.ratio_means.size();
    double mean = 0, var = 0;
    for (double r : ro.ratio_means) mean += r / double(n);
    for (double r : ro.ratio_means) var += (r - mean) * (r - mean);
    out.metrics["val/ratio_var"] = n > 1 ? var / double(n - 1) : 0.0;
  }
  return out;
}

ObjectiveResult PpoObjective::evaluate(TrainModel& model, const Batch& batch) {
  const TrainModel::AdaptersInWeights adapted = model.adapters_in_weights();
  return greedy_accuracy_result(model.model(), m_backend, m_stop, m_val, batch, m_o.max_new_tokens);
}

std::string PpoObjective::checkpoint_state() const {
  if (!m_adaptive) return {};
  // The shortest decimal that reads back as the same double: the resumed run continues with the exact value.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, m_adaptive->coef());
  return kStateKey + std::string(buf, r.ptr);
}

void PpoObjective::restore_state(const std::string& state) {
  if (!m_adaptive) {
    if (!state.empty()) throw Error("PPO: the checkpoint carries an adaptive KL coefficient, this run has none");
    return;
  }
  const std::string key = kStateKey;
  double coef = 0;
  const char* end = state.data() + state.size();
  const bool ok = state.rfind(key, 0) == 0 && std::from_chars(state.data() + key.size(), end, coef).ptr == end &&
                  std::isfinite(coef) && coef >= 0;
  if (!ok) throw Error("PPO: the checkpoint's objective state '" + state.substr(0, 60) + "' is not a KL coefficient");
  m_adaptive->set_coef(coef);
}

}  // namespace engine
