// `eval --task perplexity`: perplexity of a model on a plain-text file, in non-overlapping windows
// of --ctx tokens (engine/perplexity.h explains the scheme). With --reference, also the mean
// KL(reference || model) and top-1 agreement over the same positions -- the cost of quantization
// that means something even for untrained weights. The text is encoded without BOS.
//
// `eval --task arith|facts|chat`: exact-match accuracy on held-out questions of the generated world
// (engine/eval/task_eval.h), from --data or generated in memory (--n, --seed, --world-seed), asked
// through the model's chat template and answered greedily.
//
// `eval --task reward`: a reward model (train --recipe reward) on JSONL preference pairs: the share of
// pairs it ranks as the data does, and the mean margin, overall and per pair "kind" where rows have one.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/align/reward_model.h"
#include "engine/error.h"
#include "engine/eval/task_eval.h"
#include "engine/model_loader.h"
#include "engine/perplexity.h"

namespace wb::cli {

namespace {
std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw engine::Error(path + ": cannot open the data file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw engine::Error(path + ": read error");
  return ss.str();
}

// "  add_2d              12 / 20      60.0 %"
std::string count_line(const std::string& name, const engine::EvalCount& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-16s %5d / %-5d %6.1f %%\n", name.c_str(), c.correct, c.n, 100.0 * c.accuracy());
  return buf;
}

int run_task_eval(const Args& a, engine::EvalTask task) {
  for (const char* perplexity_only : {"ctx", "reference"})
    if (a.has(perplexity_only)) throw UsageError(std::string("--") + perplexity_only + " is for --task perplexity only");
  if (a.has("data") && (a.has("n") || a.has("seed") || a.has("world-seed")))
    throw UsageError("--n, --seed and --world-seed generate the items; they cannot be used with --data");
  const std::string model_path = a.required("model");
  const int threads = static_cast<int>(a.integer("threads", 0, 0, 1024));
  const int max_tokens = static_cast<int>(a.integer("max-tokens", engine::kTaskEvalMaxTokens, 1, 1 << 16));
  const std::vector<engine::EvalItem> items =
      a.has("data") ? engine::read_eval_items(task, a.str("data"))
                    : engine::generate_eval_items(task, a.integer("n", 200, 1, 1'000'000), a.integer("seed", 1, 0, 1ll << 62),
                                                  a.integer("world-seed", 1, 0, 1ll << 62));

  OpenedModel om{engine::load_model(model_path), engine::choose_backend(engine::BackendPreference::Auto, threads)};
  require_tokenizer(*om.model, model_path);
  if (!om.model->chat_template_note.empty()) std::cerr << "warning: " << om.model->chat_template_note << "\n";
  const engine::ReplyFunction reply =
      engine::greedy_chat_replier(*om.model, *om.backend.backend, om.model->chat_template(), max_tokens);
  engine::TaskEvalOptions options;
  options.progress = [](int done, int total) {
    std::cerr << "\ritem " << done << " of " << total << std::flush;
    return true;
  };
  const engine::TaskEvalResult r = engine::evaluate_task(task, items, reply, options);
  std::cerr << "\n";
  if (a.has("json")) {
    nlohmann::json j = nlohmann::json::parse(engine::task_eval_json(r));
    j["model"] = model_path;
    print_json(j);
    return 0;
  }
  std::cout << engine::eval_task_name(task) << " on " << model_path << "\n" << count_line("all", r.total);
  for (const auto& [name, c] : r.categories) std::cout << count_line(name, c);
  for (const engine::EvalExample& e : r.examples)
    std::cout << (e.correct ? "  right: " : "  wrong: ") << e.prompt << " -> " << nlohmann::json(e.reply).dump(
                     -1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}
}  // namespace

int cmd_eval(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = {
      {"model", true, false, "model directory or file"},
      {"task", true, false, "perplexity, arith, facts, chat, or reward (a reward model's pair accuracy)"},
      {"data", true, false,
       "perplexity: plain-text file to score; arith|facts|chat: JSONL items (data synth's format); reward: JSONL "
       "preference pairs"},
      {"n", true, false, "arith|facts|chat without --data: generate this many held-out items (default: 200)"},
      {"seed", true, false, "arith|facts|chat without --data: seed of the items (default: 1)"},
      {"world-seed", true, false, "facts|chat without --data: the world the items are about (default: 1)"},
      {"ctx", true, false, "perplexity: window length in tokens (default: 256, at most the model's context)"},
      {"reference", true, false, "perplexity: a second model (e.g. the f32 original) to compare predictions with"},
      {"max-tokens", true, false,
       "perplexity: score at most this many tokens of the text (default: all); arith|facts|chat: longest reply "
       "(default: " + std::to_string(engine::kTaskEvalMaxTokens) + ")"},
      {"threads", true, false, "CPU threads (default: all cores)"},
      {"json", false, false, "print one JSON object"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string task = a.required("task");
  if (const std::optional<engine::EvalTask> t = engine::eval_task_from_name(task)) return run_task_eval(a, *t);
  if (task != "perplexity" && task != "reward")
    throw UsageError("--task must be perplexity, arith, facts, chat or reward, got '" + task + "'");
  for (const char* task_only : {"n", "seed", "world-seed"})
    if (a.has(task_only)) throw UsageError(std::string("--") + task_only + " is for --task arith, facts or chat");
  const std::string model_path = a.required("model");
  const std::string data_path = a.required("data");
  const int threads = static_cast<int>(a.integer("threads", 0, 0, 1024));
  if (task == "reward") {
    const engine::PreferenceDataset pairs = engine::load_preference_dataset(data_path);
    engine::RewardModel rm(model_path, threads);
    const engine::PairEvaluation e = engine::evaluate_reward_model(rm, pairs);
    if (a.has("json")) {
      nlohmann::json j = {{"task", "reward"},
                          {"n", e.n},
                          {"accuracy", e.accuracy},
                          {"margin", e.margin},
                          {"mean_chosen", e.mean_chosen},
                          {"mean_rejected", e.mean_rejected}};
      if (!e.by_kind.empty()) {
        j["kinds"] = nlohmann::json::object();
        for (const auto& [kind, k] : e.by_kind)
          j["kinds"][kind] = {{"n", k.n}, {"accuracy", k.accuracy}, {"margin", k.margin}};
      }
      print_json(j);
    } else {
      std::cout << "pair accuracy " << e.accuracy << " over " << e.n << " pairs, mean margin " << e.margin << "\n";
      for (const auto& [kind, k] : e.by_kind)
        std::cout << "  " << (kind.empty() ? "(no kind)" : kind) << ": " << k.accuracy << " over " << k.n
                  << " pairs, mean margin " << k.margin << "\n";
    }
    return 0;
  }
  const long long max_tokens = a.integer("max-tokens", 0, 0, 1ll << 40);
  const std::string text = read_text_file(data_path);

  // Opened as generate and bench open it (GGUF weights in place), so the perplexity is the one the
  // quantized kernels give, activation rounding included.
  OpenedModel om{engine::load_model(model_path), engine::choose_backend(engine::BackendPreference::Auto, threads)};
  const engine::Model& model = *om.model;
  const int ctx = static_cast<int>(a.integer("ctx", std::min(256, model.config().max_seq_len), 2, 1 << 20));
  const std::vector<int32_t> all_ids = require_tokenizer(model, model_path).encode(text);
  std::vector<int32_t> ids = all_ids;
  if (max_tokens > 0 && ids.size() > static_cast<size_t>(max_tokens)) ids.resize(static_cast<size_t>(max_tokens));

  std::optional<OpenedModel> ref;
  if (a.has("reference")) {
    const std::string rp = a.str("reference");
    ref.emplace(OpenedModel{engine::load_model(rp), engine::choose_backend(engine::BackendPreference::Auto, threads)});
    // Same text must mean the same ids, else the comparison is meaningless.
    if (ref->model->tokenizer() && ref->model->tokenizer()->encode(text) != all_ids)
      throw engine::Error(rp + ": the reference's tokenizer encodes the text differently");
  }
  const engine::PerplexityResult r =
      engine::evaluate_perplexity(model, *om.backend.backend, ids, ctx, ref ? ref->model.get() : nullptr,
                                  ref ? ref->backend.backend.get() : nullptr, [](int done, int total) {
                                    std::cerr << "\rwindow " << done << " of " << total << std::flush;
                                  });
  std::cerr << "\n";
  if (a.has("json")) {
    nlohmann::json j = {{"task", "perplexity"}, {"n", r.n},   {"perplexity", r.perplexity},
                        {"nll", r.nll},         {"ctx", ctx}, {"windows", r.windows}};
    if (r.kl_vs_reference) {
      j["kl_vs_reference"] = *r.kl_vs_reference;
      j["top1_agreement"] = *r.top1_agreement;
      j["reference_perplexity"] = *r.reference_perplexity;
    }
    print_json(j);
  } else {
    std::cout << "perplexity " << r.perplexity << " over " << r.n << " tokens (" << r.windows << " windows of " << ctx
              << ")\n";
    if (r.kl_vs_reference)
      std::cout << "vs reference: KL " << *r.kl_vs_reference << " nats/token, top-1 agreement " << *r.top1_agreement
                << ", reference perplexity " << *r.reference_perplexity << "\n";
  }
  return 0;
}

}  // namespace wb::cli
