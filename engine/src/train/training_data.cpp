// prepare_training_data / model_chat_template: see engine/train/training_data.h.
#include "engine/train/training_data.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/io/model_convert.h"
#include "engine/tokenizer.h"
#include "engine/train/chat_dataset.h"
#include "engine/train/pair_loader.h"
#include "engine/train/preference_data.h"
#include "engine/train/sequence_loader.h"
#include "engine/train/text_dataset.h"

namespace engine {

std::optional<Recipe> recipe_from_name(const std::string& name) {
  if (name == "pretrain") return Recipe::Pretrain;
  if (name == "sft") return Recipe::Sft;
  if (name == "reward") return Recipe::Reward;
  if (name == "dpo") return Recipe::Dpo;
  if (name == "grpo") return Recipe::Grpo;
  if (name == "ppo") return Recipe::Ppo;
  return std::nullopt;
}

bool recipe_uses_chat_template(Recipe r) { return r != Recipe::Pretrain; }
bool recipe_uses_preference_pairs(Recipe r) { return r == Recipe::Reward || r == Recipe::Dpo; }
bool recipe_uses_prompts(Recipe r) { return r == Recipe::Grpo || r == Recipe::Ppo; }

namespace {

TrainingData prepare_preference_data(const TrainingDataOptions& o, const Tokenizer& tok, double val_fraction) {
  TrainingData out;
  const PreferenceDataset data = load_preference_dataset(o.path);
  std::vector<EncodedPair> enc = encode_preference_dataset(data, tok, o.chat_template);
  const size_t n_val = static_cast<size_t>(double(enc.size()) * val_fraction);
  std::vector<EncodedPair> val(std::make_move_iterator(enc.end() - std::ptrdiff_t(n_val)),
                               std::make_move_iterator(enc.end()));
  enc.resize(enc.size() - n_val);
  const int32_t pad = tok.eos_id().value_or(0);  // never a target, and after each row's last token
  auto train = std::make_unique<PairLoader>(std::move(enc), o.B, o.T, o.shuffle, o.seed, pad, o.path);
  out.notes.push_back(std::to_string(data.pairs.size()) + " preference pairs (" +
                      (data.conversational ? "conversational" : "prompt/chosen/rejected") + "), template '" +
                      o.chat_template.name() + "'");
  auto describe_cuts = [&](const PairLoader& l, const std::string& part) {
    if (l.dropped() > 0)
      out.notes.push_back(std::to_string(l.dropped()) + " pair(s)" + part + " have a reply starting after " +
                          std::to_string(o.T) + " tokens and are skipped (raise --seq)");
    if (l.truncated() > 0)
      out.notes.push_back(std::to_string(l.truncated()) + " pair(s)" + part + " are cut to " + std::to_string(o.T) +
                          " tokens");
  };
  describe_cuts(*train, "");
  out.train = std::move(train);
  if (!val.empty()) {
    const int vb = static_cast<int>(std::min<size_t>(size_t(o.B), val.size()));
    auto v = std::make_unique<PairLoader>(std::move(val), vb, o.T, false, 0, pad, o.path + " (validation part)");
    describe_cuts(*v, " of the validation part");
    out.val = std::move(v);
  }
  return out;
}

}  // namespace

TrainingData prepare_training_data(const TrainingDataOptions& o, const Tokenizer& tok) {
  TrainingData out;
  const double val_fraction = o.validation ? o.val_fraction : 0.0;
  if (recipe_uses_prompts(o.recipe))
    throw Error("GRPO and PPO prompts are prepared with their objectives (build_training_run)");
  if (o.recipe == Recipe::Pretrain) {
    TextDataset d = load_text_dataset(o.path, tok, val_fraction);
    out.train = std::make_unique<TokenStreamLoader>(std::move(d.train), o.B, o.T, o.shuffle, o.seed, o.path);
    if (!d.val.empty()) {
      const int vb = static_cast<int>(std::min<size_t>(size_t(o.B), (d.val.size() - 1) / size_t(o.T)));
      if (vb < 1)
        throw Error(o.path + ": the validation part (" + std::to_string(d.val.size()) +
                    " tokens) is shorter than one row of " + std::to_string(o.T) +
                    " tokens; raise the validation fraction or turn validation off");
      out.val = std::make_unique<TokenStreamLoader>(std::move(d.val), vb, o.T, false, 0, o.path);
    }
    return out;
  }
  if (recipe_uses_preference_pairs(o.recipe)) return prepare_preference_data(o, tok, val_fraction);
  const ChatDataset chats = load_chat_dataset(o.path);
  std::vector<EncodedChat> enc = encode_chat_dataset(chats, tok, o.chat_template);
  const size_t n_val = static_cast<size_t>(double(enc.size()) * val_fraction);
  std::vector<EncodedChat> val(std::make_move_iterator(enc.end() - std::ptrdiff_t(n_val)),
                               std::make_move_iterator(enc.end()));
  enc.resize(enc.size() - n_val);
  const int32_t pad = tok.eos_id().value_or(0);  // never a target, so any valid id
  auto train = std::make_unique<SequenceLoader>(std::move(enc), o.B, o.T, o.shuffle, o.seed, pad, o.path);
  out.notes.push_back(std::to_string(chats.examples.size()) + " conversations (" + chat_data_format_name(chats.format) +
                      "), template '" + o.chat_template.name() + "'");
  if (train->dropped() > 0)
    out.notes.push_back(std::to_string(train->dropped()) + " conversation(s) have no assistant token within " +
                        std::to_string(o.T) + " tokens and are skipped");
  out.train = std::move(train);
  if (!val.empty()) {
    const int vb = static_cast<int>(std::min<size_t>(size_t(o.B), val.size()));
    out.val = std::make_unique<SequenceLoader>(std::move(val), vb, o.T, false, 0, pad, o.path + " (validation part)");
  }
  return out;
}

std::optional<ChatTemplate> model_chat_template(const ModelFileInfo& info, bool* unrecognised) {
  if (unrecognised) *unrecognised = false;
  std::optional<std::string> source;
  if (info.format == ModelFormat::Gguf) {
    auto f = io::GgufFile::open(info.weights_path);
    if (f->has("tokenizer.chat_template")) source = f->get_string("tokenizer.chat_template");
  } else {
    source = io::read_chat_template(info.directory);
  }
  if (!source) return std::nullopt;
  auto t = ChatTemplate::detect(*source);
  if (!t && unrecognised) *unrecognised = true;
  return t;
}

}  // namespace engine
