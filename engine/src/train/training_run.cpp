// load_training_base / build_training_run / save_training_result: see engine/train/training_run.h.
#include "engine/train/training_run.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "engine/align/grpo_objective.h"
#include "engine/align/ppo_objective.h"
#include "engine/align/preference_objectives.h"
#include "engine/align/prompt_data.h"
#include "engine/align/reference_policy.h"
#include "engine/align/reward_model.h"
#include "engine/chat_template.h"
#include "engine/error.h"
#include "engine/io/model_convert.h"
#include "engine/tokenizer.h"
#include "engine/train/init_model.h"
#include "engine/train/lora_io.h"

namespace engine {

ChatTemplate training_chat_template(const std::string& name, const ModelFileInfo& info,
                                    std::vector<std::string>* notes) {
  if (!name.empty()) {
    auto t = ChatTemplate::from_name(name);
    if (!t) throw Error("unknown chat template '" + name + "' (chatml, llama3, llama2, zephyr, alpaca, plain)");
    return *t;
  }
  bool unrecognised = false;
  if (auto t = model_chat_template(info, &unrecognised)) return *t;
  if (unrecognised && notes)
    notes->push_back("the model's chat template is not one we render; using 'plain' (choose one with --chat-template)");
  return ChatTemplate();
}

namespace {

// The prompts of GRPO and PPO: encoded, the ones too long for a completion skipped, split, and the index loaders.
struct PromptData {
  PromptSet train, val;
  std::unique_ptr<BatchLoader> train_loader, val_loader;
};

PromptData prepare_prompt_data(const TrainingDataOptions& d, int max_new_tokens, const Tokenizer& tok,
                               std::vector<std::string>* notes) {
  std::vector<PromptItem> items = load_prompts(d.path);
  const size_t total = items.size();
  PromptSplit split = split_prompt_set(encode_prompts(std::move(items), tok, d.chat_template), d.T, max_new_tokens,
                                       d.validation ? d.val_fraction : 0.0);
  notes->push_back(std::to_string(total) + " prompts, template '" + d.chat_template.name() + "'");
  if (split.skipped > 0)
    notes->push_back(std::to_string(split.skipped) + " prompt(s) leave no room for " +
                     std::to_string(max_new_tokens) + " new tokens within " + std::to_string(d.T) +
                     " and are skipped (raise --seq or lower --max-new-tokens)");
  PromptData out;
  const size_t n_train = split.train.items.size(), n_val = split.val.items.size();
  out.train = std::move(split.train);
  out.val = std::move(split.val);
  out.train_loader = std::make_unique<PromptIndexLoader>(n_train, d.B, d.shuffle, d.seed, d.path);
  if (n_val > 0)
    out.val_loader = std::make_unique<PromptIndexLoader>(n_val, int(std::min<size_t>(size_t(d.B), n_val)), false, 0,
                                                         d.path + " (validation part)");
  return out;
}

}  // namespace

TrainingRun::~TrainingRun() {
  trainer.reset();
  objective.reset();
  reward_model.reset();
  reference.reset();
  train_model.reset();
}

TrainingBase load_training_base(const std::string& path, uint64_t seed) {
  if (path.empty()) throw Error("no model to train was given");
  TrainingBase b;
  b.path = path;
  if (is_config_json_path(path)) {
    b.info = {ModelFormat::HfDirectory, "", std::filesystem::path(path).parent_path().string()};
    b.model = model_from_config(path, seed);
  } else {
    b.info = detect_model_format(path);
    b.model = load_model(path, {}, LoadOptions{.dequantize = true});
  }
  if (!b.model->tokenizer())
    throw Error(path + ": the model has no tokenizer (expected tokenizer.json or vocab.json + merges.txt beside it)");
  return b;
}

std::unique_ptr<TrainingRun> build_training_run(TrainingBase base, const TrainingRunSpec& spec,
                                                Communicator* communicator) {
  if (spec.zero_stage != 0 && spec.zero_stage != 1)
    throw Error("--zero must be 0 or 1, got " + std::to_string(spec.zero_stage));
  if (spec.zero_stage == 1 && spec.recipe != Recipe::Pretrain && spec.recipe != Recipe::Sft)
    throw Error("--zero 1 shards the optimizer state of data-parallel training, which covers the pretrain and sft "
                "recipes (full or LoRA); run reward, dpo, grpo and ppo without it");
  if (const int world = communicator ? communicator->world_size() : 1; world > 1) {
    // Checked before the data is read: every rank would otherwise spend that time first.
    if (spec.recipe != Recipe::Pretrain && spec.recipe != Recipe::Sft)
      throw Error("data-parallel training (" + std::to_string(world) +
                  " processes) covers the pretrain and sft recipes (full or LoRA); run reward, dpo, grpo and ppo "
                  "in one process");
    if (spec.batch < world)
      throw Error("--batch " + std::to_string(spec.batch) + " is the global batch and cannot be shared by " +
                  std::to_string(world) + " processes: use at least one row per process");
  }
  auto run = std::make_unique<TrainingRun>();
  run->spec = spec;
  run->base = std::move(base);
  Model& model = *run->base.model;
  const Tokenizer& tok = *model.tokenizer();
  const int context = model.config().max_seq_len;
  const int T = run->spec.seq = spec.seq > 0 ? spec.seq : std::min(128, context);
  if (T > context)
    throw Error("the sequence length " + std::to_string(T) + " exceeds the model's context of " +
                std::to_string(context) + " tokens");
  run->backend = choose_backend(BackendPreference::Auto, spec.threads);

  TrainingDataOptions d;
  d.recipe = spec.recipe;
  d.path = spec.data_path;
  d.B = spec.batch;
  d.T = T;
  d.shuffle = spec.shuffle;
  d.seed = spec.seed;
  d.val_fraction = spec.val_fraction;
  d.validation = spec.val_every > 0;
  if (recipe_uses_chat_template(d.recipe)) {
    d.chat_template = training_chat_template(spec.chat_template, run->base.info, &run->notes);
    run->chat_template = d.chat_template;
  }
  if (recipe_uses_preference_pairs(spec.recipe)) {
    if (spec.label_smoothing > 0) throw Error("label smoothing applies to pretrain and sft only");
    if (spec.recipe == Recipe::Reward && spec.sample_every > 0)
      throw Error("a reward model does not generate: sample generation applies to the other recipes");
  }
  GrpoOptions grpo = spec.grpo;
  grpo.seq = T;
  PpoOptions ppo = spec.ppo;
  ppo.seq = T;
  std::optional<PromptData> prompt_data;
  if (recipe_uses_prompts(spec.recipe)) {
    const bool is_ppo = spec.recipe == Recipe::Ppo;
    if (spec.label_smoothing > 0) throw Error("label smoothing applies to pretrain and sft only");
    if (is_ppo && spec.grad_accum != 1)
      throw Error("ppo makes several updates per rollout (--ppo-epochs, --num-minibatches) instead of gradient "
                  "accumulation: use --grad-accum 1");
    if (is_ppo && spec.batch % ppo.num_minibatches != 0)
      throw Error("ppo: " + std::to_string(spec.batch) + " prompts per step do not split into " +
                  std::to_string(ppo.num_minibatches) + " minibatches");
    if (is_ppo) ppo.validate();
    else grpo.validate();
    prompt_data = prepare_prompt_data(d, is_ppo ? ppo.max_new_tokens : grpo.max_new_tokens, tok, &run->notes);
    run->data.train = std::move(prompt_data->train_loader);
    run->data.val = std::move(prompt_data->val_loader);
  } else {
    run->data = prepare_training_data(d, tok);
  }
  run->notes.insert(run->notes.end(), run->data.notes.begin(), run->data.notes.end());

  LoraConfig lora = spec.lora;
  lora.seed = spec.seed;
  run->train_model = std::make_unique<TrainModel>(model, *run->backend.backend, lora);
  if (spec.recipe == Recipe::Reward) {
    run->train_model->set_scalar_head(kRewardHeadName, initial_reward_head(model.config().n_embd, spec.seed));
    run->objective = std::make_unique<RewardModelObjective>();
  } else if (spec.recipe == Recipe::Dpo) {
    run->reference = lora.rank > 0 ? ReferencePolicy::lora_base(*run->train_model)
                                   : ReferencePolicy::copy_of(model, *run->backend.backend);
    run->objective = std::make_unique<DpoObjective>(*run->reference, spec.dpo_beta);
  } else if (spec.recipe == Recipe::Grpo) {
    run->reference = lora.rank > 0 ? ReferencePolicy::lora_base(*run->train_model)
                                   : ReferencePolicy::copy_of(model, *run->backend.backend);
    run->objective = std::make_unique<GrpoObjective>(*run->reference, *run->backend.backend, d.chat_template,
                                                     std::move(prompt_data->train), std::move(prompt_data->val), grpo);
  } else if (spec.recipe == Recipe::Ppo) {
    // The value head starts as the reward model's head does; it is trained with the policy and not saved.
    run->train_model->set_scalar_head(kValueHeadName, initial_reward_head(model.config().n_embd, spec.seed + 1));
    run->reference = lora.rank > 0 ? ReferencePolicy::lora_base(*run->train_model)
                                   : ReferencePolicy::copy_of(model, *run->backend.backend);
    if (!spec.reward_model_path.empty())
      run->reward_model = std::make_unique<RewardModel>(spec.reward_model_path, spec.threads);
    run->objective =
        std::make_unique<PpoObjective>(*run->reference, *run->backend.backend, d.chat_template,
                                       std::move(prompt_data->train), std::move(prompt_data->val), ppo,
                                       run->reward_model.get());
  }

  TrainerOptions o;
  o.steps = spec.steps;
  o.grad_accum = spec.grad_accum;
  o.grad_clip = spec.grad_clip;
  o.schedule.kind = spec.schedule;
  o.schedule.base_lr = spec.lr;
  o.schedule.warmup_steps = spec.warmup;
  o.schedule.total_steps = static_cast<int>(std::min<int64_t>(spec.steps, INT32_MAX));
  o.schedule.min_lr_ratio = spec.min_lr_ratio;
  o.schedule.step_size = spec.step_size;
  o.schedule.gamma = spec.gamma;
  o.adam.beta1 = spec.beta1;
  o.adam.beta2 = spec.beta2;
  o.adam.weight_decay = spec.weight_decay;
  o.dropout = spec.dropout;
  o.label_smoothing = spec.label_smoothing;
  o.seed = spec.seed;
  o.val_every = run->data.val ? spec.val_every : 0;
  o.val_batches = spec.val_batches;
  o.sample_every = spec.sample_every;
  o.sample_tokens = spec.sample_tokens;
  if (spec.sample_every > 0) {
    // A chat fine-tune learns to answer turns in its template, so its sample prompt is a user turn
    // rendered in that template (ending where the assistant's reply begins), not raw text.
    if (recipe_uses_chat_template(spec.recipe)) {
      const std::vector<ChatMessage> turn{{"user", spec.sample_prompt}};
      o.sample_prompt = encode_chat(tok, d.chat_template.render(turn, true), turn);
    } else {
      o.sample_prompt = tok.encode(spec.sample_prompt);
    }
    if (o.sample_prompt.empty()) throw Error("the sample prompt is empty");
  }
  o.save_every = spec.save_every;
  o.checkpoint_dir = (std::filesystem::path(spec.out_dir) / "checkpoints").string();
  o.keep_checkpoints = spec.keep_checkpoints;
  o.config_json = spec.config_json;
  o.max_skipped_steps = spec.max_skipped_steps;
  o.communicator = communicator;
  o.zero_stage = spec.zero_stage;
  run->tokens_per_step = int64_t(run->data.train->batch_size()) * T * spec.grad_accum;
  run->trainer = std::make_unique<Trainer>(*run->train_model, *run->data.train, run->data.val.get(),
                                           run->backend.backend.get(), o, run->objective.get());
  return run;
}

std::vector<std::string> save_training_result(TrainingRun& run, const std::string& provenance_json) {
  std::vector<std::string> warnings;
  const TrainingRunSpec& spec = run.spec;
  // LoRA: the adapters alone (PEFT layout) and the model with them merged, so the result both loads in
  // PEFT and runs here or in llama.cpp without an adapter loader. A resume restarts from the
  // checkpoint, never from out_dir, so merging into the weights here is safe.
  if (run.train_model->lora_config().rank > 0) {
    save_lora_adapters(*run.train_model, (std::filesystem::path(spec.out_dir) / "adapter").string(), run.base.path);
    run.train_model->merge_lora();
  }
  const Model& model = *run.base.model;
  const bool gguf = run.base.info.format == ModelFormat::Gguf;
  save_hf_directory(model, spec.out_dir, gguf ? std::string() : run.base.info.directory, provenance_json);
  // A GGUF base carries its tokenizer inside; the HF directory needs it as files.
  if (gguf && model.tokenizer() && !io::write_gpt2_tokenizer_files(*model.tokenizer(), spec.out_dir) &&
      !io::write_tokenizer_json(*model.tokenizer(), spec.out_dir))
    warnings.push_back("the tokenizer (SentencePiece) cannot be written as HF files yet; " + spec.out_dir +
                       " has none");
  if (spec.recipe == Recipe::Reward)
    save_reward_head(spec.out_dir, run.train_model->scalar_head(), run.chat_template.name());
  return warnings;
}

}  // namespace engine
