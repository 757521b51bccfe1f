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

// Rank r > 0 of a data-parallel run draws its own masks: with the one-process seed its rows would get exactly the
// masks of rank 0's rows. Rank 0 keeps the one-process seed.
uint64_t rank_dropout_seed(uint64_t seed, int rank) {
  if (rank == 0) return seed;
  uint64_t s = seed ^ (uint64_t(rank) * 0xD6E8FEB86659FD93ull);
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
  if (zero_stage != 0 && zero_stage != 1) fail("the ZeRO stage must be 0 or 1");
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
      m_local(options.communicator ? nullptr : make_local_communicator()),
      m_comm(options.communicator ? *options.communicator : *m_local),
      m_zero((options.validate(), options.zero_stage == 1 && !objective)
                 ? std::make_unique<ZeroShard>(m_comm, model.trainable())
                 : nullptr),
      m_opt(model.trainable(), options.adam, &model.backend(), m_zero ? m_zero->shard() : kAllValues) {
  if (m_o.zero_stage == 1 && m_objective)
    throw Error("ZeRO (--zero 1) shards the optimizer of the pretrain and sft recipes; the reward, dpo, grpo and ppo "
                "recipes run without it");
  if (m_comm.world_size() > 1) {
    if (m_objective)
      throw Error("data-parallel training (" + std::to_string(m_comm.world_size()) +
                  " processes) covers the language-model loss (pretrain, sft); run the reward, dpo, grpo and ppo "
                  "recipes in one process");
    if (m_train.batch_size() < m_comm.world_size())
      throw Error("data-parallel training: a batch of " + std::to_string(m_train.batch_size()) + " rows cannot be " +
                  "shared by " + std::to_string(m_comm.world_size()) + " processes (--batch is the global batch)");
    if (!m_zero) m_sync = std::make_unique<GradientSync>(m_comm, m_opt.tensors());
  }
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
  if (m_zero) {
    const std::unique_ptr<AdamW> whole = m_zero->gather_optimizer(m_opt, 0);
    return whole ? save_checkpoint(m_o.checkpoint_dir, *whole, st, m_o.keep_checkpoints) : std::string();
  }
  return save_checkpoint(m_o.checkpoint_dir, m_opt, st, m_o.keep_checkpoints);
}

int Trainer::rank() const { return m_comm.rank(); }
int Trainer::world_size() const { return m_comm.world_size(); }

const Batch& Trainer::shard_of(const Batch& global) {
  const int64_t n = m_comm.world_size(), r = m_comm.rank(), B = global.B;
  const int first = int(r * B / n), end = int((r + 1) * B / n);
  take_rows(global, first, end - first, m_shard);
  return m_shard;
}

float Trainer::validation_loss() { return validate().loss; }

Trainer::Validation Trainer::validate() {
  if (!m_val) throw Error("no validation data");
  m_val->seek(DataPosition{});
  double sum = 0, weight = 0;
  std::map<std::string, double> sums;
  const bool parallel = m_comm.world_size() > 1;
  for (int i = 0; i < m_o.val_batches; ++i) {
    m_val->next(m_batch);
    if (m_objective) {
      const ObjectiveResult r = m_objective->evaluate(m_model, m_batch);
      sum += r.loss * r.weight;
      weight += r.weight;
      for (const auto& [name, v] : r.metrics) sums[name] += v * r.weight;
      continue;
    }
    // A validation batch smaller than the world leaves some ranks without rows: they add nothing.
    const Batch& b = parallel ? shard_of(m_batch) : m_batch;
    const double n = b.B > 0 ? double(b.counted_positions()) : 0.0;
    if (n == 0) continue;
    sum += double(m_model.loss(b.view(), m_o.label_smoothing)) * n;
    weight += n;
  }
  if (parallel) {
    double totals[2] = {sum, weight};
    m_comm.allreduce_sum(totals, 2);
    sum = totals[0];
    weight = totals[1];
  }
  Validation v;
  if (weight > 0) {
    v.loss = static_cast<float>(sum / weight);
    for (const auto& [name, s] : sums) v.metrics[name] = static_cast<float>(s / weight);
  }
  return v;
}

std::string Trainer::sample() {
  const TrainModel::AdaptersInWeights adapted = m_model.adapters_in_weights();  // a LoRA run samples its policy
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
  const int world = m_comm.world_size(), rank = m_comm.rank();
  const bool parallel = world > 1;
  while (m_step < m_o.steps) {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t k = m_step + 1;
    StepMetrics sm;
    sm.step = k;
    sm.world_size = world;
    TrainStepOptions so;
    so.dropout = m_o.dropout;
    so.label_smoothing = m_o.label_smoothing;
    double loss_sum = 0, norm_sum = 0;
    int64_t tokens = 0;
    std::map<std::string, double> metric_sums;
    std::map<std::string, int> metric_counts;
    const int updates = m_objective ? m_objective->updates_per_step() : 1;
    int calls = 0, updates_done = 0;
    if (m_sync) m_sync->reset_seconds();
    if (m_zero) m_zero->reset_seconds();
    double scalar_comm_seconds = 0;
    for (int u = 0; u < updates; ++u) {
      double update_sum = 0;
      for (int micro = 0; micro < m_o.grad_accum; ++micro) {
        // Several updates per step learn from one batch (grad_accum is then 1).
        if (u == 0) m_train.next(m_batch);
        so.dropout_seed = rank_dropout_seed(dropout_seed(m_o.seed, k, micro + u), rank);
        const float scale = 1.0f / float(m_o.grad_accum);
        if (m_objective) {
          ObjectiveResult r = m_objective->forward_backward_update(m_model, m_batch, so, scale, u);
          update_sum += r.loss;
          for (const auto& [name, v] : r.metrics) {
            metric_sums[name] += v;
            ++metric_counts[name];
          }
          for (CompletionSample& c : r.samples) sm.samples.push_back(std::move(c));
        } else if (parallel) {
          // This rank's share of the micro-batch's counted tokens weights its mean loss and gradient, so the sum
          // over ranks is the mean over the whole global micro-batch. Every rank holds the global batch and so
          // computes the same total without communicating.
          const Batch& mine = shard_of(m_batch);
          const double total = m_batch.counted_weight();
          const double share = total > 0 ? mine.counted_weight() / total : 0.0;
          const float loss = m_model.forward_backward(mine.view(), so, float(share / m_o.grad_accum));
          update_sum += double(loss) * share;
        } else {
          update_sum += m_model.forward_backward(m_batch.view(), so, scale);
        }
        ++calls;
        if (u == 0) tokens += int64_t(m_batch.B) * m_batch.T;
      }
      if (parallel) {
        if (m_zero) {
          m_zero->reduce_scatter_gradients();
          sm.allreduce_bytes += m_zero->bytes_per_update();
        } else {
          m_sync->all_reduce();
          sm.allreduce_bytes += m_sync->bytes_per_reduce();
        }
        const auto c0 = std::chrono::steady_clock::now();
        m_comm.allreduce_sum(&update_sum, 1);
        scalar_comm_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
      }
      loss_sum += update_sum;
      const float update_loss = static_cast<float>(update_sum / m_o.grad_accum);
      const float lr = lr_at(m_o.schedule, int(std::min<int64_t>(k - 1, INT32_MAX)));
      // ZeRO: each rank holds the global gradient on its shard only; the norm is still the global one.
      const GradNormReport norm =
          m_zero ? clip_grad_norm_sharded(ts, m_opt.shard(), m_o.grad_clip, m_comm, &m_model.backend())
                 : clip_grad_norm(ts, m_o.grad_clip, &m_model.backend());
      norm_sum += norm.norm;
      ++updates_done;
      if (!std::isfinite(update_loss) || !norm.finite) {
        // Refuse the update: weights and optimizer state stay exactly as they were before it. The step's
        // remaining updates (PPO) are dropped too: they would learn from the same broken rollout. The loss and the
        // gradients are global values, so every rank of a data-parallel run refuses the same update.
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
      if (m_zero) m_zero->all_gather_values();  // every rank again holds all the updated weights
      m_model.zero_grads();
    }
    m_step = k;
    sm.loss = static_cast<float>(loss_sum / calls);
    for (const auto& [name, s] : metric_sums) sm.metrics[name] = static_cast<float>(s / metric_counts[name]);
    sm.lr = lr_at(m_o.schedule, int(std::min<int64_t>(k - 1, INT32_MAX)));
    sm.grad_norm = static_cast<float>(norm_sum / updates_done);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sm.tokens_per_s = secs > 0 ? double(tokens) / secs : 0;
    if (m_sync) {
      sm.comm_seconds = m_sync->seconds() + scalar_comm_seconds;
      sm.wait_seconds = m_sync->wait_seconds();
    }
    if (m_zero && parallel) {
      sm.comm_seconds = m_zero->seconds() + scalar_comm_seconds;
      sm.wait_seconds = m_zero->wait_seconds();
    }
    sm.optimizer_bytes = m_opt.state_bytes();
    sm.zero_stage = m_zero ? 1 : 0;
    const bool last = m_step == m_o.steps;
    if (m_val && m_o.val_every > 0 && (k % m_o.val_every == 0 || last)) {
      Validation v = validate();
      sm.val_loss = v.loss;
      sm.val_metrics = std::move(v.metrics);
    }
    if (rank == 0 && m_o.sample_every > 0 && (k % m_o.sample_every == 0 || last)) sm.sample = sample();
    const bool save = !m_o.checkpoint_dir.empty() && ((m_o.save_every > 0 && k % m_o.save_every == 0) || last);
    // With ZeRO every rank takes part in gathering the state; rank 0 alone writes it.
    if (save && (rank == 0 || m_zero)) {
      sm.checkpoint = save_checkpoint_now();
      r.last_checkpoint = sm.checkpoint;
    }
    r.steps_done = m_step;
    bool go_on = !on_step || on_step(sm);
    // A stop asked for on one rank (its Ctrl-C, its callback) stops every rank after this same step.
    if (parallel) go_on = !m_comm.any(!go_on);
    if (!go_on) {
      r.stopped = !last;
      // A paused run can be resumed from where it stopped.
      if (r.stopped && !m_o.checkpoint_dir.empty() && !save && (rank == 0 || m_zero))
        r.last_checkpoint = save_checkpoint_now();
      break;
    }
  }
  r.steps_done = m_step;
  return r;
}

}  // namespace engine
