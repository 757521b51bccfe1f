// A trained reward model on disk and in use: our HF directory (engine/model_loader.h) plus the scalar head,
// stored as Hugging Face's *ForSequenceClassification stores it, and a scorer for (prompt, reply) pairs.
//
// On disk (save_reward_head, after save_hf_directory wrote the transformer):
//   model.safetensors  gains "score.weight" (1, C) beside the transformer's tensors (load_model ignores it,
//                      so the directory still opens as a plain model);
//   config.json        "architectures": ["<Arch>ForSequenceClassification"], id2label / label2id of one label;
//   workbench.json     "reward_model": {"head": "score.weight", "chat_template": "<name>"} -- the flag we read,
//                      and the template the pairs were rendered with, so scoring encodes exactly as training.
// A reward is the head applied to the final-norm output at the last token of encode_prompt_reply(prompt,
// reply) (engine/train/preference_data.h) cut to the model's context: the value training optimized.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/chat_template.h"
#include "engine/train/preference_data.h"

namespace engine {

class Backend;
class Model;
class TrainModel;

// Adds the head and the flags above to the HF directory `dir`. Throws engine::Error (files untouched on
// failure: each is rewritten atomically).
void save_reward_head(const std::string& dir, const std::vector<float>& head, const std::string& chat_template_name);

// True when `path` is a directory (or a file in one) whose workbench.json flags a reward model.
bool is_reward_model(const std::string& path);

class RewardModel {
 public:
  // Loads the model (weights widened to f32) and its head. threads: CPU threads (0 = all cores). Throws
  // engine::Error when `path` is not a reward model or is unreadable.
  explicit RewardModel(const std::string& path, int threads = 0);
  ~RewardModel();

  // The reward of `reply` to a conversation ending with a user turn.
  float score(const std::vector<ChatMessage>& prompt, const std::string& reply);
  float score(const std::string& prompt, const std::string& reply) { return score({{"user", prompt}}, reply); }

  const ChatTemplate& chat_template() const { return m_template; }
  const Model& model() const { return *m_model; }

 private:
  std::unique_ptr<Model> m_model;
  std::unique_ptr<Backend> m_backend;
  std::unique_ptr<TrainModel> m_net;
  ChatTemplate m_template;
};

// A reward model on held-out pairs: the share it ranks as the data does (r_chosen > r_rejected), the mean
// margin and the mean rewards; the same per pair kind (PreferencePair::kind) when any pair has one, so a
// category that is hard (right vs wrong answers) is not hidden in the overall share.
struct PairScores {
  int64_t n = 0;
  double accuracy = 0, margin = 0, mean_chosen = 0, mean_rejected = 0;
};
struct PairEvaluation : PairScores {
  std::map<std::string, PairScores> by_kind;  // empty when no pair has a kind; "" = pairs without one
};
PairEvaluation evaluate_reward_model(RewardModel& model, const PreferenceDataset& pairs);

}  // namespace engine
