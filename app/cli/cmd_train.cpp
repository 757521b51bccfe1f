// `train`: pretraining on plain text, supervised fine-tuning on JSONL chats (DESIGN.md §5; issue 5), from
// preference pairs a reward model or DPO, and GRPO and PPO on prompts with checkable answers (issue 24).
//
// Prints one JSON object per optimizer step on stdout (and appends it to --metrics FILE.jsonl):
// step, loss, lr, grad_norm, tokens_per_s, and when computed val_loss, sample, skipped, checkpoint; the
// reward model adds accuracy and margin, DPO TRL's rewards/chosen, rewards/rejected, rewards/margins,
// rewards/accuracies, logps/chosen, logps/rejected -- each also as val_<name> at validation; GRPO TRL's reward,
// reward_std, kl, completion_length, clip_ratio, frac_reward_zero_std, and val_accuracy (greedy, held-out prompts);
// PPO TRL's objective/kl, objective/entropy, objective/non_score_reward, objective/rlhf_reward, objective/scores,
// objective/kl_coef, policy/clipfrac_avg, policy/approxkl_avg, policy/entropy_avg, loss/policy_avg, loss/value_avg,
// val/clipfrac_avg, val/ratio, val/ratio_var, val/num_eos_tokens, completion_length, val_accuracy, and "samples":
// a few of the step's completions [{prompt, completion, score}].
// Writes checkpoints to OUT/checkpoints every --save-every steps and at the end, and the trained model
// as our HF directory into OUT. --resume continues from the newest loadable checkpoint in
// OUT/checkpoints with exactly the state an uninterrupted run would have had; the settings that shape
// the run must match the checkpoint's (they are compared and a difference is refused by name).
//
// Started by mpirun / srun as N processes (engine/dist/communicator.h), the run is data-parallel
// (engine/train/trainer.h): --batch is the global batch, rank 0 alone prints, writes the metrics, checkpoints and the
// model, each JSON line adds world_size, comm_ms (the exchange), wait_ms (waiting for slower ranks before it) and
// allreduce_bytes, and each rank takes cores / (ranks on this machine) threads unless --threads says otherwise. A
// checkpoint resumes at any world size. A failure while the run is being set up ends every rank with its exit status
// (rank 0's message alone when rank 0 failed too); one during training aborts the whole job, since the other ranks
// would wait for the failed one forever.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <thread>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/align/ppo_objective.h"
#include "engine/align/reward_model.h"
#include "engine/chat_template.h"
#include "engine/dist/communicator.h"
#include "engine/error.h"
#include "engine/io/model_convert.h"
#include "engine/model_loader.h"
#include "engine/train/checkpoint.h"
#include "engine/train/training_run.h"
#include "engine/train/zero_shard.h"

namespace wb::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A float as the shortest decimal that reads back as it (0.003f prints "0.003", not 0.003000000026077032).
double json_float(float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

// Ctrl-C: finish the current step, write a checkpoint and the model, then exit (resumable).
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

// The settings that must be equal for a resumed run to continue the same run. The step count may grow
// only under a constant schedule: the others are shaped by it.
json run_identity(const json& cfg) {
  json id = cfg;
  if (cfg.value("schedule", "") == "constant") id.erase("steps");
  return id;
}

// The ranks of a data-parallel run agree, before the first step, on whether every one of them is ready: a rank that
// failed to set up (bad data on its machine, out of memory) would otherwise leave the others waiting in the first
// gradient exchange. Each rank calls this exactly once, from the end of its setup or from its failure.
struct SetupOutcome {
  bool anyone_failed = false;
  bool rank0_failed = false;
};

SetupOutcome agree_on_setup(engine::Communicator& comm, bool i_failed) {
  double v[2] = {i_failed ? 1.0 : 0.0, i_failed && comm.rank() == 0 ? 1.0 : 0.0};
  comm.allreduce_sum(v, 2);
  return {v[0] > 0, v[1] > 0};
}

// Thrown on a rank whose setup went well when another's did not; the failed rank says why.
struct AnotherRankFailed {};

int train(int argc, char** argv, engine::Communicator& comm);

}  // namespace

int cmd_train(int argc, char** argv) {
  const std::unique_ptr<engine::Communicator> comm = engine::make_process_communicator();
  if (comm->world_size() == 1) return train(argc, argv, *comm);
  // mpirun ends the whole job as soon as one rank exits non-zero: every message must be out before any rank exits,
  // so the failures of setup are reported here, not by main(), and a barrier follows.
  const auto leave = [&](int code) {
    std::cerr.flush();
    std::cout.flush();
    comm->barrier();
    return code;
  };
  try {
    return train(argc, argv, *comm);  // ends the whole job itself when training fails
  } catch (const AnotherRankFailed&) {
    return leave(1);
  } catch (...) {
    const SetupOutcome o = agree_on_setup(*comm, true);
    // Ranks that fail alike (bad flags, bad data) print one message: rank 0's.
    const bool speak = comm->rank() == 0 || !o.rank0_failed;
    const std::string who = comm->rank() == 0 ? "" : "rank " + std::to_string(comm->rank()) + ": ";
    int code = 1;
    std::string message;
    try {
      throw;
    } catch (const HelpRequested& h) {
      if (comm->rank() == 0) std::cout << h.what();
      return leave(0);
    } catch (const UsageError& e) {
      code = 2;
      message = who + e.what();
    } catch (const std::bad_alloc&) {
      message = who + "error: out of memory";
    } catch (const std::exception& e) {
      message = who + "error: " + e.what();
    }
    if (speak) std::cerr << "llm-workbench-cli train: " << message << "\n";
    return leave(code);
  }
}

namespace {

int train(int argc, char** argv, engine::Communicator& comm) {
  const bool rank0 = comm.rank() == 0, parallel = comm.world_size() > 1;
  const int world = comm.world_size();
  static const std::vector<FlagSpec> flags = {
      {"recipe", true, false,
       "pretrain (plain text), sft (JSONL chat / Alpaca, loss on assistant tokens), reward (a reward model "
       "from JSONL preference pairs {prompt, chosen, rejected}), dpo (direct preference optimization on them), grpo "
       "(group relative policy optimization on JSONL prompts {prompt, answer, kind} rewarded by exact match) or ppo "
       "(proximal policy optimization with a value head on the same prompts, rewarded by exact match or by "
       "--reward-model)"},
      {"model", true, false,
       "model to start from (HF directory, GGUF or llm.c .bin; quantized weights are widened), "
       "or a config.json to start from random weights"},
      {"data", true, false,
       "training data: a UTF-8 text file (pretrain), a JSONL chat file (sft), JSONL preference pairs (reward, dpo) "
       "or JSONL prompts (grpo, ppo)"},
      {"out", true, false, "output directory: the trained model, checkpoints/ inside it"},
      {"lora-rank", true, false, "LoRA rank (0 = full fine-tuning, the default)"},
      {"lora-alpha", true, false, "LoRA alpha (default 16)"},
      {"lora-dropout", true, false, "LoRA: dropout on the adapter input (default 0)"},
      {"lora-targets", true, false,
       "LoRA: comma-separated weight groups, e.g. h.qkv.weight,h.attn_proj.weight "
       "(default: PEFT's defaults for the architecture)"},
      {"batch", true, false,
       "rows per micro-batch (default 4); reward, dpo: pairs per micro-batch; grpo: prompts per micro-batch; ppo: prompts (one completion each) per rollout"},
      {"seq", true, false, "tokens per row (default 128, at most the model's context)"},
      {"grad-accum", true, false, "micro-batches per optimizer step (default 1; ppo: 1 only)"},
      {"steps", true, false, "optimizer steps (default 100); ppo: rollouts, each --ppo-epochs x --num-minibatches updates"},
      {"lr", true, false, "peak learning rate (default 3e-4)"},
      {"schedule", true, false, "constant, cosine (default), linear or step"},
      {"warmup", true, false, "linear warmup steps (default 0)"},
      {"min-lr-ratio", true, false, "cosine/linear: final lr as a fraction of --lr (default 0.1)"},
      {"step-size", true, false, "step schedule: decay every N steps (default 100)"},
      {"gamma", true, false, "step schedule: decay factor (default 0.5)"},
      {"weight-decay", true, false, "AdamW decoupled weight decay on matrices (default 0.1)"},
      {"beta1", true, false, "AdamW beta1 (default 0.9)"},
      {"beta2", true, false, "AdamW beta2 (default 0.95)"},
      {"grad-clip", true, false, "global gradient-norm limit, 0 = off (default 1.0)"},
      {"dropout", true, false, "dropout probability (default 0)"},
      {"label-smoothing", true, false, "label smoothing epsilon (default 0)"},
      {"shuffle", true, false, "on (default) or off: off reads the token stream in order"},
      {"seed", true, false, "seed for data order, dropout and LoRA init (default 1)"},
      {"val-fraction", true, false, "share of the data held out for validation (default 0.05; 0 = none)"},
      {"val-every", true, false, "validation loss every N steps and at the end (default 50; 0 = never)"},
      {"val-batches", true, false, "batches per validation (default 8)"},
      {"sample-every", true, false, "greedy sample generation every N steps (default 0 = never)"},
      {"sample-prompt", true, false, "prompt of the samples (default \"Once upon a time\")"},
      {"sample-tokens", true, false, "tokens per sample (default 32)"},
      {"save-every", true, false, "checkpoint every N steps (default 0 = only at the end)"},
      {"keep", true, false, "checkpoints kept (default 3; 0 = all)"},
      {"max-skipped-steps", true, false, "steps with a NaN/inf loss or gradient skipped before stopping (default 0)"},
      {"chat-template", true, false,
       "sft, reward, dpo, grpo, ppo: chatml, llama3, llama2, zephyr, alpaca or plain (default: the model's)"},
      {"beta", true, false,
       "how strongly the policy is held to the starting model: dpo: the DPO beta (default 0.1); grpo: the weight "
       "of the per-token KL to it (default 0.04)"},
      {"group-size", true, false, "grpo: completions sampled per prompt (default 4)"},
      {"loss-type", true, false,
       "grpo: how the loss averages over completion tokens: grpo (default: per completion, then over the "
       "completions, as TRL's loss_type \"grpo\") or bnpo (one mean over all completion tokens of the batch, "
       "so short replies do not weigh more per token)"},
      {"temperature", true, false, "grpo, ppo: sampling temperature of the completions (default 1.0)"},
      {"max-new-tokens", true, false, "grpo, ppo: tokens per completion at most (default 24)"},
      {"clip", true, false, "grpo, ppo: clipping epsilon of the probability ratio (default 0.2)"},
      {"kl-coef", true, false,
       "ppo: weight of the per-token KL to the starting model in the reward (default 0.05; with --target-kl the "
       "initial value)"},
      {"target-kl", true, false,
       "ppo: adapt the KL coefficient towards this per-completion KL (Ziegler et al.'s controller; default 0 = "
       "fixed coefficient)"},
      {"kl-horizon", true, false,
       "ppo with --target-kl: completions over which the coefficient moves by at most 20% (default 10000)"},
      {"kl-estimator", true, false, "ppo: k1 (logp - ref_logp, the default) or k3 (non-negative)"},
      {"ppo-epochs", true, false, "ppo: passes over each rollout (default 4)"},
      {"num-minibatches", true, false, "ppo: minibatches per pass, each one update; divides --batch (default 1)"},
      {"gae-gamma", true, false, "ppo: discount of the GAE (default 1.0)"},
      {"gae-lambda", true, false, "ppo: lambda of the GAE (default 0.95)"},
      {"cliprange-value", true, false, "ppo: clipping range of the value loss (default 0.2)"},
      {"vf-coef", true, false, "ppo: weight of the value loss (default 0.1)"},
      {"entropy-coef", true, false,
       "ppo: weight of the entropy bonus (sampled estimate, mean -logp of the completion tokens; default 0)"},
      {"reward-model", true, false,
       "ppo: a reward model directory (train --recipe reward) scoring prompt + completion instead of exact match"},
      {"resume", false, false, "continue from the newest checkpoint in OUT/checkpoints"},
      {"metrics", true, false, "also append the per-step JSON lines to this file"},
      {"threads", true, false,
       "CPU threads (default: all cores; under mpirun / srun: the machine's cores over its ranks)"},
      {"zero", true, false,
       "pretrain, sft: 1 = ZeRO stage 1, the AdamW state split over the processes of an mpirun run (each keeps "
       "1/N of it); 0 = off (the default)"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string recipe = a.required("recipe");
  if (!engine::recipe_from_name(recipe))
    throw UsageError("unknown --recipe '" + recipe + "' (pretrain, sft, reward, dpo, grpo or ppo)");
  const bool grpo = recipe == "grpo", ppo = recipe == "ppo";
  const bool chat_recipe = recipe == "sft" || recipe == "reward" || recipe == "dpo" || grpo || ppo;
  if (a.has("beta") && recipe != "dpo" && !grpo) throw UsageError("--beta applies to --recipe dpo and grpo only");
  // GRPO's beta may be 0 (no KL term, as TRL's later default); DPO's must be positive.
  const double beta = grpo ? a.number("beta", 0.04, 0.0, 1e6) : a.number("beta", 0.1, 1e-6, 1e6);
  if (a.has("group-size") && !grpo) throw UsageError("--group-size applies to --recipe grpo only");
  if (a.has("loss-type") && !grpo) throw UsageError("--loss-type applies to --recipe grpo only");
  const std::string loss_type_name = a.str("loss-type", "grpo");
  if (loss_type_name != "grpo" && loss_type_name != "bnpo") throw UsageError("--loss-type must be grpo or bnpo");
  const engine::GrpoLossType loss_type = engine::grpo_loss_type_from_name(loss_type_name);
  for (const char* f : {"temperature", "max-new-tokens", "clip"})
    if (a.has(f) && !grpo && !ppo) throw UsageError(std::string("--") + f + " applies to --recipe grpo and ppo only");
  for (const char* f : {"kl-coef", "target-kl", "kl-horizon", "kl-estimator", "ppo-epochs", "num-minibatches",
                        "gae-gamma", "gae-lambda", "cliprange-value", "vf-coef", "entropy-coef", "reward-model"})
    if (a.has(f) && !ppo) throw UsageError(std::string("--") + f + " applies to --recipe ppo only");
  if (a.has("kl-horizon") && !a.has("target-kl")) throw UsageError("--kl-horizon needs --target-kl");
  engine::PpoOptions ppo_options;
  ppo_options.kl_coef = a.number("kl-coef", 0.05, 0.0, 1e6);
  ppo_options.target_kl = a.number("target-kl", 0.0, 0.0, 1e6);
  ppo_options.kl_horizon = a.number("kl-horizon", 10000.0, 1.0, 1e12);
  const std::string kl_estimator = a.str("kl-estimator", "k1");
  if (kl_estimator != "k1" && kl_estimator != "k3")
    throw UsageError("--kl-estimator must be k1 or k3, got '" + kl_estimator + "'");
  ppo_options.kl_estimator = kl_estimator == "k3" ? engine::KlEstimator::K3 : engine::KlEstimator::K1;
  ppo_options.ppo_epochs = static_cast<int>(a.integer("ppo-epochs", 4, 1, 1024));
  ppo_options.num_minibatches = static_cast<int>(a.integer("num-minibatches", 1, 1, 1 << 16));
  ppo_options.gamma = a.number("gae-gamma", 1.0, 0.0, 1.0);
  ppo_options.lam = a.number("gae-lambda", 0.95, 0.0, 1.0);
  ppo_options.cliprange_value = a.number("cliprange-value", 0.2, 1e-6, 1e6);
  ppo_options.vf_coef = a.number("vf-coef", 0.1, 0.0, 1e6);
  ppo_options.entropy_coef = a.number("entropy-coef", 0.0, 0.0, 1e6);
  const std::string reward_model = a.str("reward-model");
  if (a.has("reward-model") && !engine::is_reward_model(reward_model))
    throw UsageError("--reward-model " + reward_model +
                     " is not a reward model (its workbench.json has no \"reward_model\"; train one with --recipe "
                     "reward)");
  const int group_size = static_cast<int>(a.integer("group-size", 4, 2, 1024));
  const double temperature = a.number("temperature", 1.0, 1e-3, 100.0);
  const int max_new_tokens = static_cast<int>(a.integer("max-new-tokens", 24, 1, 1 << 16));
  const double clip = a.number("clip", 0.2, 1e-6, 0.999);
  const std::string model_path = a.required("model");
  const std::string data_path = a.required("data");
  const std::string out = a.required("out");
  const int lora_rank = static_cast<int>(a.integer("lora-rank", 0, 0, 4096));
  const double lora_alpha = a.number("lora-alpha", 16.0, 1e-6, 1e6);
  const double lora_dropout = a.number("lora-dropout", 0.0, 0.0, 0.95);
  std::vector<std::string> lora_targets;
  if (a.has("lora-targets")) {
    std::stringstream list(a.str("lora-targets"));
    for (std::string t; std::getline(list, t, ',');)
      if (!t.empty()) lora_targets.push_back(t);
    if (lora_targets.empty()) throw UsageError("--lora-targets names no weight group");
  }
  if (lora_rank == 0 && (a.has("lora-alpha") || a.has("lora-dropout") || a.has("lora-targets")))
    throw UsageError("--lora-alpha, --lora-dropout and --lora-targets need --lora-rank > 0");
  const int B = static_cast<int>(a.integer("batch", 4, 1, 1 << 16));
  const int grad_accum = static_cast<int>(a.integer("grad-accum", 1, 1, 1 << 16));
  if (ppo && grad_accum != 1)
    throw UsageError("--grad-accum applies to the other recipes: ppo makes --ppo-epochs x --num-minibatches "
                     "updates per rollout instead");
  if (ppo && B % ppo_options.num_minibatches != 0)
    throw UsageError("--num-minibatches " + std::to_string(ppo_options.num_minibatches) + " does not divide --batch " +
                     std::to_string(B));
  const int64_t steps = a.integer("steps", 100, 1, int64_t(1) << 40);
  const double lr = a.number("lr", 3e-4, 0.0, 10.0);
  const std::string schedule_name = a.str("schedule", "cosine");
  const auto schedule_kind = engine::lr_schedule_from_name(schedule_name);
  if (!schedule_kind) throw UsageError("unknown --schedule '" + schedule_name + "' (constant, cosine, linear, step)");
  const int warmup = static_cast<int>(a.integer("warmup", 0, 0, INT32_MAX));
  const double min_lr_ratio = a.number("min-lr-ratio", 0.1, 0.0, 1.0);
  const int step_size = static_cast<int>(a.integer("step-size", 100, 1, INT32_MAX));
  const double gamma = a.number("gamma", 0.5, 1e-9, 1.0);
  const double weight_decay = a.number("weight-decay", 0.1, 0.0, 10.0);
  const double beta1 = a.number("beta1", 0.9, 0.0, 0.999999);
  const double beta2 = a.number("beta2", 0.95, 0.0, 0.999999);
  const double grad_clip = a.number("grad-clip", 1.0, 0.0, 1e9);
  const double dropout = a.number("dropout", 0.0, 0.0, 0.95);
  const double label_smoothing = a.number("label-smoothing", 0.0, 0.0, 0.95);
  const std::string shuffle_s = a.str("shuffle", "on");
  if (shuffle_s != "on" && shuffle_s != "off") throw UsageError("--shuffle must be on or off, got '" + shuffle_s + "'");
  const bool shuffle = shuffle_s == "on";
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 1, 0, INT64_MAX));
  const double val_fraction = a.number("val-fraction", 0.05, 0.0, 0.5);
  const int val_every = static_cast<int>(a.integer("val-every", 50, 0, INT32_MAX));
  const int val_batches = static_cast<int>(a.integer("val-batches", 8, 1, 1 << 20));
  const int sample_every = static_cast<int>(a.integer("sample-every", 0, 0, INT32_MAX));
  const int sample_tokens = static_cast<int>(a.integer("sample-tokens", 32, 1, 1 << 16));
  const int save_every = static_cast<int>(a.integer("save-every", 0, 0, INT32_MAX));
  const int keep = static_cast<int>(a.integer("keep", 3, 0, 1 << 20));
  const int max_skipped = static_cast<int>(a.integer("max-skipped-steps", 0, 0, INT32_MAX));
  // Ranks on one machine share its cores: by default each takes its part of them.
  const int default_threads =
      parallel ? std::max(1, int(std::thread::hardware_concurrency()) / std::max(1, comm.local_size())) : 0;
  const int threads = static_cast<int>(a.integer("threads", default_threads, 0, 1024));
  const int zero = static_cast<int>(a.integer("zero", 0, 0, 1));
  if (zero == 1 && recipe != "pretrain" && recipe != "sft")
    throw UsageError("--zero 1 applies to --recipe pretrain and sft (the data-parallel recipes, full or LoRA)");
  const bool resume = a.has("resume");
  const std::string ckpt_dir = (fs::path(out) / "checkpoints").string();
  if (!resume && !engine::list_checkpoints(ckpt_dir).empty())
    throw UsageError(out +
                     " already holds checkpoints of a run: pass --resume to continue it, or choose another --out");

  // The model, widened to f32 (training needs every weight in the arena), or a config.json to start
  // from random weights (tokenizer files beside it).
  engine::TrainingBase base = engine::load_training_base(model_path, seed);
  const int context = base.model->config().max_seq_len;
  const int T = static_cast<int>(a.integer("seq", std::min(128, context), 1, 1 << 20));
  if (T > context)
    throw UsageError("--seq " + std::to_string(T) + " exceeds the model's context of " + std::to_string(context) +
                     " tokens");
  const std::string chat_template = a.str("chat-template");
  if (chat_recipe && !chat_template.empty() && !engine::ChatTemplate::from_name(chat_template))
    throw UsageError("unknown --chat-template '" + chat_template + "' (chatml, llama3, llama2, zephyr, alpaca, plain)");

  json config = {{"recipe", recipe},
                 {"model", model_path},
                 {"data", data_path},
                 {"batch", B},
                 {"seq", T},
                 {"grad_accum", grad_accum},
                 {"steps", steps},
                 {"lr", lr},
                 {"schedule", schedule_name},
                 {"warmup", warmup},
                 {"min_lr_ratio", min_lr_ratio},
                 {"step_size", step_size},
                 {"gamma", gamma},
                 {"weight_decay", weight_decay},
                 {"beta1", beta1},
                 {"beta2", beta2},
                 {"grad_clip", grad_clip},
                 {"dropout", dropout},
                 {"label_smoothing", label_smoothing},
                 {"shuffle", shuffle},
                 {"seed", seed},
                 {"val_fraction", val_fraction},
                 {"lora_rank", lora_rank},
                 {"lora_alpha", lora_alpha},
                 {"lora_dropout", lora_dropout},
                 {"lora_targets", lora_targets}};
  if (recipe == "dpo") config["beta"] = beta;
  if (grpo) {
    config["beta"] = beta;
    config["group_size"] = group_size;
    config["loss_type"] = loss_type_name;
    config["temperature"] = temperature;
    config["max_new_tokens"] = max_new_tokens;
    config["clip"] = clip;
  }
  if (ppo) {
    config["temperature"] = temperature;
    config["max_new_tokens"] = max_new_tokens;
    config["clip"] = clip;
    config["kl_coef"] = ppo_options.kl_coef;
    config["target_kl"] = ppo_options.target_kl;
    config["kl_horizon"] = ppo_options.kl_horizon;
    config["kl_estimator"] = kl_estimator;
    config["ppo_epochs"] = ppo_options.ppo_epochs;
    config["num_minibatches"] = ppo_options.num_minibatches;
    config["gae_gamma"] = ppo_options.gamma;
    config["gae_lambda"] = ppo_options.lam;
    config["cliprange_value"] = ppo_options.cliprange_value;
    config["vf_coef"] = ppo_options.vf_coef;
    config["entropy_coef"] = ppo_options.entropy_coef;
    config["reward_model"] = reward_model;
  }

  engine::TrainingRunSpec spec;
  spec.recipe = *engine::recipe_from_name(recipe);
  spec.data_path = data_path;
  spec.out_dir = out;
  spec.lora.rank = lora_rank;
  spec.lora.alpha = static_cast<float>(lora_alpha);
  spec.lora.dropout = static_cast<float>(lora_dropout);
  spec.lora.targets = lora_targets;
  spec.batch = B;
  spec.seq = T;
  spec.grad_accum = grad_accum;
  spec.steps = steps;
  spec.lr = static_cast<float>(lr);
  spec.schedule = *schedule_kind;
  spec.warmup = warmup;
  spec.min_lr_ratio = static_cast<float>(min_lr_ratio);
  spec.step_size = step_size;
  spec.gamma = static_cast<float>(gamma);
  spec.beta1 = beta1;
  spec.beta2 = beta2;
  spec.weight_decay = weight_decay;
  spec.grad_clip = static_cast<float>(grad_clip);
  spec.dropout = static_cast<float>(dropout);
  spec.label_smoothing = static_cast<float>(label_smoothing);
  spec.shuffle = shuffle;
  spec.seed = seed;
  spec.val_fraction = val_fraction;
  spec.val_every = val_every;
  spec.val_batches = val_batches;
  spec.sample_every = sample_every;
  spec.sample_prompt = a.str("sample-prompt", "Once upon a time");
  if (sample_every > 0 && spec.sample_prompt.empty()) throw UsageError("--sample-prompt is empty");
  spec.sample_tokens = sample_tokens;
  spec.save_every = save_every;
  spec.keep_checkpoints = keep;
  spec.max_skipped_steps = max_skipped;
  spec.chat_template = chat_recipe ? chat_template : std::string();
  spec.dpo_beta = beta;
  spec.grpo.beta = beta;
  spec.grpo.group_size = group_size;
  spec.grpo.temperature = static_cast<float>(temperature);
  spec.grpo.max_new_tokens = max_new_tokens;
  spec.grpo.clip = clip;
  spec.grpo.loss_type = loss_type;
  spec.ppo = ppo_options;
  spec.ppo.temperature = static_cast<float>(temperature);
  spec.ppo.max_new_tokens = max_new_tokens;
  spec.ppo.cliprange = clip;
  spec.reward_model_path = reward_model;
  spec.threads = threads;
  // Not in `config` (the run's identity, compared on --resume): like the world size, ZeRO changes where the
  // optimizer state lives, not what the run computes, and its checkpoints hold the whole state.
  spec.zero_stage = zero;
  spec.config_json = config.dump();
  const std::unique_ptr<engine::TrainingRun> run = engine::build_training_run(std::move(base), spec, &comm);
  if (rank0)
    for (const std::string& note : run->notes) std::cerr << "train: " << note << "\n";
  engine::Trainer& trainer = *run->trainer;

  if (resume) {
    std::vector<std::string> warnings;
    const engine::TrainState st = trainer.resume(&warnings);
    if (rank0)
      for (const std::string& w : warnings) std::cerr << "train: " << w << "\n";
    json saved;
    try {
      saved = json::parse(st.config_json);
    } catch (const json::exception&) {
      throw engine::Error(ckpt_dir + ": the checkpoint's settings are not readable JSON");
    }
    const json want = run_identity(config), have = run_identity(saved);
    for (auto it = want.begin(); it != want.end(); ++it)
      if (!have.contains(it.key()) || have[it.key()] != it.value())
        throw UsageError("--resume: the checkpoint was made with " + it.key() + " = " +
                         (have.contains(it.key()) ? have[it.key()].dump() : std::string("(unset)")) +
                         ", this run has " + it.value().dump() + "; use the same settings or another --out");
    if (rank0) std::cerr << "train: resuming at step " << st.step << " of " << steps << "\n";
  }

  std::ofstream metrics;
  if (a.has("metrics") && rank0) {
    metrics.open(a.str("metrics"), resume ? std::ios::app : std::ios::trunc);
    if (!metrics) throw engine::Error(a.str("metrics") + ": cannot open the metrics file for writing");
  }
  if (parallel) {
    if (agree_on_setup(comm, false).anyone_failed) throw AnotherRankFailed{};
    if (rank0)
      std::cerr << "train: data-parallel over " << world << " processes (" << comm.backend_name() << "), "
                << B / world << (B % world ? "-" + std::to_string(B / world + 1) : std::string()) << " of the "
                << B << " rows of each batch per process, " << threads << " thread(s) each\n";
  }
  if (zero == 1 && rank0) {
    // Every rank's share from the same split the trainer made (rank 0 alone speaks).
    const engine::AdamW& opt = trainer.optimizer();
    const std::vector<uint64_t> bounds = engine::shard_bounds(opt.total_values(), world);
    uint64_t least = UINT64_MAX, most = 0;
    for (size_t r = 0; r + 1 < bounds.size(); ++r) {
      least = std::min(least, bounds[r + 1] - bounds[r]);
      most = std::max(most, bounds[r + 1] - bounds[r]);
    }
    const auto mib = [](uint64_t values) { return double(values * 2 * sizeof(float)) / (1 << 20); };
    char line[200];
    std::snprintf(line, sizeof line, "%.1f to %.1f MiB per process (%llu to %llu bytes), of %.1f MiB unsharded",
                  mib(least), mib(most), static_cast<unsigned long long>(least * 2 * sizeof(float)),
                  static_cast<unsigned long long>(most * 2 * sizeof(float)), mib(opt.total_values()));
    std::cerr << "train: ZeRO stage 1 over " << world << " process" << (world > 1 ? "es" : "") << ": AdamW state "
              << line << "\n";
  }
  // Training and the result written: from here on a failure can be one rank's alone (rank 0 writing to a full disk).
  const auto train_and_save = [&]() -> int {
    std::signal(SIGINT, on_sigint);
    const engine::TrainResult r = trainer.run([&](const engine::StepMetrics& m) {
      if (!rank0) return g_interrupted == 0;
      json j = {{"step", m.step},
                {"loss", json_float(m.loss)},
                {"lr", json_float(m.lr)},
                {"grad_norm", json_float(m.grad_norm)},
                {"tokens_per_s", std::round(m.tokens_per_s * 10) / 10}};
      for (const auto& [name, v] : m.metrics) j[name] = json_float(v);
      if (m.val_loss) j["val_loss"] = json_float(*m.val_loss);
      for (const auto& [name, v] : m.val_metrics) j["val_" + name] = json_float(v);
      if (m.sample) j["sample"] = *m.sample;
      if (!m.samples.empty()) {
        json table = json::array();
        for (const engine::CompletionSample& c : m.samples)
          table.push_back({{"prompt", c.prompt}, {"completion", c.completion}, {"score", json_float(float(c.score))}});
        j["samples"] = std::move(table);
      }
      if (m.skipped) j["skipped"] = true;
      if (!m.checkpoint.empty()) j["checkpoint"] = m.checkpoint;
      if (m.world_size > 1) {
        j["world_size"] = m.world_size;
        j["comm_ms"] = std::round(m.comm_seconds * 1e5) / 100;
        j["wait_ms"] = std::round(m.wait_seconds * 1e5) / 100;
        j["allreduce_bytes"] = m.allreduce_bytes;
      }
      if (m.world_size > 1 || m.zero_stage > 0) j["optimizer_bytes"] = m.optimizer_bytes;  // rank 0's
      if (m.zero_stage > 0) j["zero"] = m.zero_stage;
      print_json(j);
      if (metrics.is_open()) {
        metrics << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
        metrics.flush();
      }
      return g_interrupted == 0;
    });
    std::signal(SIGINT, SIG_DFL);
    if (metrics.is_open() && !metrics) throw engine::Error(a.str("metrics") + ": write error");
    if (!rank0) return r.stopped ? 130 : 0;

    json provenance = {{"created_by", "llm-workbench-cli train"},
                       {"base_model", model_path},
                       {"steps", r.steps_done},
                       {"training", config}};
    if (parallel) provenance["world_size"] = world;
    if (zero) provenance["zero_stage"] = zero;
    for (const std::string& w : engine::save_training_result(*run, provenance.dump(2)))
      std::cerr << "train: " << w << "\n";
    if (r.stopped) {
      std::cerr << "train: interrupted after step " << r.steps_done << "; checkpoint " << r.last_checkpoint
                << " and the model written to " << out << "; continue with --resume\n";
      return 130;
    }
    std::cerr << "train: " << r.steps_done << " steps; model written to " << out << "\n";
    return 0;
  };
  if (!parallel) return train_and_save();
  try {
    return train_and_save();
  } catch (const std::exception& e) {
    // The other ranks may be waiting for this one in a collective: end them all.
    std::cerr << "llm-workbench-cli train: " << (rank0 ? std::string() : "rank " + std::to_string(comm.rank()) + ": ")
              << "error: " << e.what() << "\n";
    std::cerr.flush();
    comm.abort(1);
  }
  return 1;  // not reached: abort() ends the process
}

}  // namespace

}  // namespace wb::cli
