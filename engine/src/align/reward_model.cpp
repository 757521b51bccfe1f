// Reward models on disk and scoring: see engine/align/reward_model.h.
#include "engine/align/reward_model.h"

#include <filesystem>

#include "engine/align/preference_objectives.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/io/mapped_file.h"
#include "engine/io/safetensors.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/train/preference_data.h"
#include "engine/train/train_model.h"
#include "io/json_util.h"

namespace engine {

namespace fs = std::filesystem;

namespace {

void write_json_file(const fs::path& path, const io::json& j) {
  const std::string text = j.dump(2) + "\n";
  io::write_file_atomic(path.string(), text.data(), text.size());
}

// The directory of a model path (a directory, or a file inside one).
fs::path model_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
}

// workbench.json's "reward_model" object, or null when the file or the flag is missing.
std::optional<io::json> reward_flag(const fs::path& dir) {
  std::error_code ec;
  const fs::path wb = dir / "workbench.json";
  if (!fs::is_regular_file(wb, ec)) return std::nullopt;
  const io::json j = io::parse_json_file(wb.string());
  if (!j.is_object() || !j.contains("reward_model") || !j["reward_model"].is_object()) return std::nullopt;
  return j["reward_model"];
}

}  // namespace

void save_reward_head(const std::string& dir, const std::vector<float>& head, const std::string& chat_template_name) {
  const fs::path d(dir);
  const fs::path weights = d / "model.safetensors";
  {
    // Every tensor is read back (our writer stores f32) and written again with the head beside them.
    auto file = io::SafetensorsFile::open(weights.string());
    std::vector<std::vector<float>> values;
    values.reserve(file->tensors().size());
    std::vector<io::StTensorToWrite> out;
    for (const io::StTensor& t : file->tensors()) {
      if (t.name == kRewardHeadName) continue;
      values.push_back(file->read_f32(t));
      out.push_back({t.name, io::StDType::F32, t.shape, values.back().data()});
    }
    out.push_back({kRewardHeadName, io::StDType::F32, {1, uint64_t(head.size())}, head.data()});
    io::write_safetensors(weights.string(), out, {{"format", "pt"}});
  }
  io::json cfg = io::parse_json_file((d / "config.json").string());
  std::string arch = cfg.contains("architectures") && cfg["architectures"].is_array() &&
                             !cfg["architectures"].empty() && cfg["architectures"][0].is_string()
                         ? cfg["architectures"][0].get<std::string>()
                         : std::string("GPT2LMHeadModel");
  for (const char* suffix : {"LMHeadModel", "ForCausalLM"})
    if (const size_t at = arch.rfind(suffix); at != std::string::npos && at + std::string(suffix).size() == arch.size())
      arch = arch.substr(0, at);
  cfg["architectures"] = {arch + "ForSequenceClassification"};
  cfg["id2label"] = {{"0", "LABEL_0"}};
  cfg["label2id"] = {{"LABEL_0", 0}};
  write_json_file(d / "config.json", cfg);
  const fs::path wb = d / "workbench.json";
  std::error_code ec;
  io::json prov = fs::is_regular_file(wb, ec) ? io::parse_json_file(wb.string()) : io::json::object();
  if (!prov.is_object()) prov = io::json::object();
  prov["reward_model"] = {{"head", kRewardHeadName}, {"chat_template", chat_template_name}};
  write_json_file(wb, prov);
}

bool is_reward_model(const std::string& path) {
  try {
    return reward_flag(model_directory(path)).has_value();
  } catch (const Error&) {
    return false;
  }
}

RewardModel::RewardModel(const std::string& path, int threads) {
  const fs::path dir = model_directory(path);
  const std::optional<io::json> flag = reward_flag(dir);
  if (!flag)
    throw Error(path +
                ": not a reward model (its workbench.json has no \"reward_model\"; train one with "
                "train --recipe reward)");
  m_model = load_model(dir.string(), {}, LoadOptions{.dequantize = true});
  if (!m_model->tokenizer()) throw Error(path + ": the reward model has no tokenizer");
  const int C = m_model->config().n_embd;
  auto file = io::SafetensorsFile::open((dir / "model.safetensors").string());
  const io::StTensor* t = file->find(kRewardHeadName);
  if (!t) throw Error(path + ": model.safetensors has no " + std::string(kRewardHeadName));
  if (t->shape != std::vector<uint64_t>{1, uint64_t(C)})
    throw Error(path + ": " + std::string(kRewardHeadName) + " must have the shape [1, " + std::to_string(C) + "]");
  std::vector<float> head = file->read_f32(*t);
  const std::string name = flag->contains("chat_template") && (*flag)["chat_template"].is_string()
                               ? (*flag)["chat_template"].get<std::string>()
                               : std::string();
  if (auto tmpl = ChatTemplate::from_name(name)) m_template = *tmpl;
  else m_template = m_model->chat_template();
  m_backend = choose_backend(BackendPreference::Auto, threads).backend;
  m_net = std::make_unique<TrainModel>(*m_model, *m_backend, TrainModel::Frozen{});
  m_net->set_scalar_head(kRewardHeadName, std::move(head));
}

RewardModel::~RewardModel() = default;

float RewardModel::score(const std::vector<ChatMessage>& prompt, const std::string& reply) {
  EncodedReply e = encode_prompt_reply(*m_model->tokenizer(), m_template, prompt, reply);
  const size_t n = std::min(e.ids.size(), size_t(m_model->config().max_seq_len));
  const int T = static_cast<int>(n);
  const std::vector<float> values = m_net->scalar_head_values({e.ids.data(), nullptr, nullptr, 1, T});
  return values[n - 1];
}

PairEvaluation evaluate_reward_model(RewardModel& model, const PreferenceDataset& pairs) {
  PairEvaluation e;
  bool kinds = false;
  const auto add = [](PairScores& to, double c, double r) {
    to.accuracy += c > r ? 1 : 0;
    to.margin += c - r;
    to.mean_chosen += c;
    to.mean_rejected += r;
    ++to.n;
  };
  const auto finish = [](PairScores& to) {
    if (to.n > 0)
      for (double* v : {&to.accuracy, &to.margin, &to.mean_chosen, &to.mean_rejected}) *v /= double(to.n);
  };
  for (const PreferencePair& p : pairs.pairs) {
    const double c = model.score(p.prompt, p.chosen), r = model.score(p.prompt, p.rejected);
    add(e, c, r);
    add(e.by_kind[p.kind], c, r);
    kinds = kinds || !p.kind.empty();
  }
  finish(e);
  if (!kinds) e.by_kind.clear();
  for (auto& [kind, k] : e.by_kind) finish(k);
  return e;
}

}  // namespace engine
