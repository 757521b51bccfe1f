// The training loop: see engine/train/trainer.h for the step and its invariants.
#include "engine/train/trainer.h"

#include <chrono>
#include <cmath>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/train/grad_clip.h"

namespace engine {

namespace {

// The dropout seed of micro-batch `micro` of step `step`: a pure function, so a resumed run draws
// the same masks as an uninterrupted one.
uint64_t dropout_seed(uint64_t seed, int64_t step, int micro) {
  uint64_t s = seed ^ (uint64_t(step) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(micro) << 48);
  return splitmix64_next(s);
}

std::string describe(float v) { return std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf"); }

}  // namespace

void TrainerOptions::validate() const {
  auto fail = [](const std::string& m) { throw Error("training options: " + m); };
  if (steps < 1) fail("steps must be >= 1");
  if (grad_accum < 1) fail("gradient accumulation must be >= 1");
  if (!std::isfinite(grad_clip)) fail("the gradient clip must be finite");
  if (!(dropout >= 0.0f && dropout < 1.0f)) fail("dropout must be in [0, 1)");
  if (!(label_smoothing >= 0.0f && label_smoothing < 1.0f)) fail("label smoothing must be in [0, 1)");
  if (val_every < 0 || sample_every < 0 || save_every < 0) fail("intervals must be >= 0");
  if (val_batches < 1) fail("validation batches must be >= 1");
  if (sample_tokens < 1) fail("sample tokens must be >= 1");
  if (max_skipped_steps < 0) fail("max skipped steps must be >= 0");
  schedule.validate();
}

Trainer::Trainer(TrainModel& model, BatchLoader& train, BatchLoader* val, Backend* backend,
                 const TrainerOptions& options, TrainObjective* objective)
    : m_model(model),
      m_train(train),
      m_val(val),
      m_backend(backend),
      m_o(options),
      m_objective(objective),
      m_opt((options.validate(), model.trainable()), options.adam, &model.backend()) {
  if (m_o.sample_every > 0 && (!m_backend || m_o.sample_prompt.empty()))
    throw Error("training options: sample generation needs a backend and a non-empty prompt");
  if (m_objective && m_objective->updates_per_step() < 1)
    throw Error("training options: an objective must make at least one update per step");
  if (m_objective && m_objective->updates_per_step() > 1 && m_o.grad_accum != 1)
    throw Error("training options: an objective with several updates per step (PPO) needs gradient accumulation 1");
  m_model.zero_grads();
}

TrainState Trainer::resume(std::vector<std::string>* warnings) {
  if (m_o.checkpoint_dir.empty()) throw Error("cannot resume: no checkpoint directory was given");
  TrainState st = load_latest_checkpoint(m_o.checkpoint_dir, m_opt, nullptr, warnings);
  m_train.seek(st.data);
  m_step = st.step;
  if (m_objective) m_objective->restore_state(st.objective_state);
  return st;
}

std::string Trainer::save_checkpoint_now() {
  if (m_o.checkpoint_dir.empty()) throw Error("cannot save a checkpoint: no checkpoint directory was given");
  TrainState st;
  st.step = m_step;
  st.data = m_train.position();
  st.seed = m_o.seed;
  st.config_json = m_o.config_json;
  if (m_objective) st.objective_state = m_objective->checkpoint_state();
  return save_checkpoint(m_o.checkpoint_dir, m_opt, st, m_o.keep_checkpoints);
}

float Trainer::validation_loss() { return validate().loss; }

Trainer::Validation Trainer::validate() {
  if (!m_val) throw Error("no validation data");
  m_val->seek(DataPosition{});
  double sum = 0, weight = 0;
  std::map<std::string, double> sums;
  for (int i = 0; i < m_o.val_batches; ++i) {
    m_val->next(m_batch);
    if (m_objective) {
      const ObjectiveResult r = m_objective->evaluate(m_model, m_batch);
      sum += r.loss * r.weight;
      weight += r.weight;
      for (const auto& [name, v] : r.metrics) sums[name] += v * r.weight;
      continue;
    }
    const double n = double(m_batch.counted_positions());
    if (n == 0) continue;
    sum += double(m_model.loss(m_batch.view(), m_o.label_smoothing)) * n;
    weight += n;
  }
  Validation v;
  if (weight > 0) {
    v.loss = static_cast<float>(sum / weight);
    for (const auto& [name, s] : sums) v.metrics[name] = static_cast<float>(s / weight);
  }
  return v;
}

std::string Trainer::sample() {
  Generator gen(m_model.model(), *m_backend);
  GenerateParams p;
  p.max_tokens = m_o.sample_tokens;
  p.sampler.temperature = 0.0f;  // greedy: the same weights always give the same sample
  std::string out;
  for (const GeneratedToken& t : gen.generate(m_o.sample_prompt, p).tokens) out += t.bytes;
  return out;
}

TrainResult Trainer::run(const StepCallback& on_step) {
  TrainResult r;
  const std::vector<TrainableTensor>& ts = m_opt.tensors();
  while (m_step < m_o.steps) {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t k = m_step + 1;
    StepMetrics sm;
    sm.step = k;
    TrainStepOptions so;
    so.dropout = m_o.dropout;
    so.label_smoothing = m_o.label_smoothing;
    double loss_sum = 0, norm_sum = 0;
    int64_t tokens = 0;
    std::map<std::string, double> metric_sums;
    std::map<std::string, int> metric_counts;
    const int updates = m_objective ? m_objective->updates_per_step() : 1;
    int calls = 0, updates_done = 0;
    for (int u = 0; u < updates; ++u) {
      double update_sum = 0;
      for (int micro = 0; micro < m_o.grad_accum; ++micro) {
        // Several updates per step learn from one batch (grad_accum is then 1).
        if (u == 0) m_train.next(m_batch);
        so.dropout_seed = dropout_seed(m_o.seed, k, micro + u);
        const float scale = 1.0f / float(m_o.grad_accum);
        if (m_objective) {
          ObjectiveResult r = m_objective->forward_backward_update(m_model, m_batch, so, scale, u);
          update_sum += r.loss;
          for (const auto& [name, v] : r.metrics) {
            metric_sums[name] += v;
            ++metric_counts[name];
          }
          for (CompletionSample& c : r.samples) sm.samples.push_back(std::move(c));
        } else {
          update_sum += m_model.forward_backward(m_batch.view(), so, scale);
        }
        ++calls;
        if (u == 0) tokens += int64_t(m_batch.B) * m_batch.T;
      }
      loss_sum += update_sum;
      const float update_loss = static_cast<float>(update_sum / m_o.grad_accum);
      const float lr = lr_at(m_o.schedule, int(std::min<int64_t>(k - 1, INT32_MAX)));
      const GradNormReport norm = clip_grad_norm(ts, m_o.grad_clip, &m_model.backend());
      norm_sum += norm.norm;
      ++updates_done;
      if (!std::isfinite(update_loss) || !norm.finite) {
        // Refuse the update: weights and optimizer state stay exactly as they were before it. The step's
        // remaining updates (PPO) are dropped too: they would learn from the same broken rollout.
        sm.skipped = true;
        ++r.skipped_steps;
        m_model.zero_grads();
        if (r.skipped_steps > m_o.max_skipped_steps) {
          const std::string what = !std::isfinite(update_loss) ? "the loss is " + describe(update_loss)
                                                               : "the gradient of '" + norm.first_bad + "' is not finite";
          throw Error("step " + std::to_string(k) + ": " + what +
                      "; the update was skipped and the weights are unchanged (lower --lr, enable --grad-clip, or "
                      "check the data)");
        }
        break;
      }
      m_opt.step(lr);
      m_model.zero_grads();
    }
    m_step = k;
    sm.loss = static_cast<float>(loss_sum / calls);
    for (const auto& [name, s] : metric_sums) sm.metrics[name] = static_cast<float>(s / metric_counts[name]);
    sm.lr = lr_at(m_o.schedule, int(std::min<int64_t>(k - 1, INT32_MAX)));
    sm.grad_norm = static_cast<float>(norm_sum / updates_done);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sm.tokens_per_s = secs > 0 ? double(tokens) / secs : 0;
    const bool last = m_step == m_o.steps;
    if (m_val && m_o.val_every > 0 && (k % m_o.val_every == 0 || last)) {
      Validation v = validate();
      sm.val_loss = v.loss;
      sm.val_metrics = std::move(v.metrics);
    }
    if (m_o.sample_every > 0 && (k % m_o.sample_every == 0 || last)) sm.sample = sample();
    if (!m_o.checkpoint_dir.empty() && ((m_o.save_every > 0 && k % m_o.save_every == 0) || last)) {
      sm.checkpoint = save_checkpoint_now();
      r.last_checkpoint = sm.checkpoint;
    }
    r.steps_done = m_step;
    if (on_step && !on_step(sm)) {
      r.stopped = !last;
      // A paused run can be resumed from where it stopped.
      if (r.stopped && !m_o.checkpoint_dir.empty() && sm.checkpoint.empty()) r.last_checkpoint = save_checkpoint_now();
      break;
    }
  }
  r.steps_done = m_step;
  return r;
}

}  // namespace engine
