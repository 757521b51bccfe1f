// libFuzzer target: training and evaluation data files (engine/src/train: text_dataset, chat_dataset,
// training_data, dataset_inspection, preference_data; align/prompt_data; eval/task_eval). Input: one
// mode byte, then the file's bytes.
//   mode % 7 == 0: pretrain -- prepare_training_data on plain text, a few batches drawn
//   mode % 7 == 1: sft -- prepare_training_data on JSONL chat / Alpaca rows, a few batches drawn
//   mode % 7 == 2: parse_chat_jsonl against scan_chat_jsonl: the two apply the same row checks, so
//                  parse must fail exactly when scan reports a bad row, else agree on the rows
//   mode % 7 == 3: inspect_dataset (the wizard's dataset step) with token counting
//   mode % 7 == 4: preference pairs (reward / DPO): parsed, encoded with a chat template, batched by PairLoader
//   mode % 7 == 5: prompts with checkable answers (GRPO): parsed, encoded, each answer scored
//   mode % 7 == 6: evaluation items (arith, facts or chat, by the mode's bits)
// Bits of the mode byte pick batch shape, shuffling, split and chat template. Every refusal must be
// an engine::Error; every batch drawn must hold ids inside the vocabulary.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/align/prompt_data.h"
#include "engine/error.h"
#include "engine/eval/task_eval.h"
#include "engine/tokenizer.h"
#include "engine/train/chat_dataset.h"
#include "engine/train/data_loader.h"
#include "engine/train/dataset_inspection.h"
#include "engine/train/pair_loader.h"
#include "engine/train/preference_data.h"
#include "engine/train/training_data.h"
#include "fuzz_common.h"

namespace {

using namespace engine;

void draw_batches(BatchLoader& loader, int32_t vocab) {
  Batch batch;
  for (int i = 0; i < 3; ++i) {
    loader.next(batch);
    if (batch.inputs.size() != size_t(batch.B) * batch.T || batch.targets.size() != batch.inputs.size())
      __builtin_trap();
    for (size_t j = 0; j < batch.inputs.size(); ++j)
      if (batch.inputs[j] < 0 || batch.inputs[j] >= vocab || batch.targets[j] < -1 || batch.targets[j] >= vocab)
        __builtin_trap();
  }
  loader.seek(loader.position());
}

void prepare(const std::string& path, Recipe recipe, uint8_t bits) {
  TrainingDataOptions o;
  o.recipe = recipe;
  o.path = path;
  o.B = 1 + (bits & 1);
  o.T = (bits & 2) ? 4 : 16;
  o.shuffle = bits & 4;
  o.val_fraction = (bits & 8) ? 0.0 : 0.25;
  o.chat_template = ChatTemplate(static_cast<ChatTemplateKind>((bits >> 4) % 6));
  const Tokenizer& tok = wb_fuzz::fixture_tokenizer();
  TrainingData d = prepare_training_data(o, tok);
  draw_batches(*d.train, tok.vocab_size());
  if (d.val) draw_batches(*d.val, tok.vocab_size());
}

void parse_against_scan(std::string_view text) {
  ChatDataScan scan;
  try {
    scan = scan_chat_jsonl(text, "fuzz.jsonl");
  } catch (const Error&) {
    try {
      (void)parse_chat_jsonl(text, "fuzz.jsonl");
    } catch (const Error&) {
      return;
    }
    __builtin_trap();  // scan refused the whole file, parse accepted it
  }
  bool parsed = false;
  ChatDataset d;
  try {
    d = parse_chat_jsonl(text, "fuzz.jsonl");
    parsed = true;
  } catch (const Error&) {
  }
  if (parsed != (scan.bad_rows == 0)) __builtin_trap();
  if (parsed && (d.examples.size() != scan.dataset.examples.size() || d.format != scan.dataset.format))
    __builtin_trap();
}

void inspect(const std::string& path, uint8_t bits) {
  DatasetInspectionOptions o;
  o.path = path;
  o.seq = (bits & 1) ? 4 : 64;
  o.val_fraction = (bits & 2) ? 0.0 : 0.5;
  o.chat_template = ChatTemplate(static_cast<ChatTemplateKind>((bits >> 2) % 6));
  o.preview_rows = 2;
  o.max_problems = 3;
  const DatasetInspection r = inspect_dataset(o, &wb_fuzz::fixture_tokenizer());
  if (r.problems.size() > o.max_problems || r.bad_rows > r.rows || r.preview.size() > o.preview_rows) __builtin_trap();
}

void preference_pairs(std::string_view text, uint8_t bits) {
  const PreferenceDataset d = parse_preference_jsonl(text, "fuzz.jsonl");
  const auto& tok = wb_fuzz::fixture_tokenizer();
  const std::vector<EncodedPair> pairs =
      encode_preference_dataset(d, tok, ChatTemplate(static_cast<ChatTemplateKind>(bits % 6)));
  for (const EncodedPair& p : pairs)
    for (const EncodedReply* r : {&p.chosen, &p.rejected}) {
      if (r->reply_start >= r->ids.size()) __builtin_trap();  // a reply of no token must have been refused
      for (int32_t id : r->ids)
        if (id < 0 || id >= tok.vocab_size()) __builtin_trap();
    }
  // The reward / DPO batches: chosen and rejected rows side by side, cut or padded to T.
  PairLoader loader(pairs, 1 + ((bits >> 3) & 1), (bits & 0x10) ? 4 : 16, bits & 0x20, 7, 0, "fuzz.jsonl");
  draw_batches(loader, tok.vocab_size());
}

void prompts(std::string_view text, uint8_t bits) {
  std::vector<PromptItem> items = parse_prompts_jsonl(text, "fuzz.jsonl");
  for (const PromptItem& item : items) {
    const float r = programmatic_reward(item, item.answer);
    if (r != 0.0f && r != 1.0f) __builtin_trap();
  }
  (void)encode_prompts(std::move(items), wb_fuzz::fixture_tokenizer(), ChatTemplate(static_cast<ChatTemplateKind>(bits % 6)));
}

void eval_items(std::string_view text, uint8_t bits) {
  const EvalTask task = bits % 3 == 0 ? EvalTask::Arith : bits % 3 == 1 ? EvalTask::Facts : EvalTask::Chat;
  (void)parse_eval_items(task, text, "fuzz.jsonl");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t bits = data[0] >> 2;
  const std::string_view text = wb_fuzz::as_text(data + 1, size - 1);
  try {
    switch (data[0] % 7) {
      case 0: {
        const wb_fuzz::MemoryFile f(text, "fuzz.txt");
        prepare(f.path(), Recipe::Pretrain, bits);
        break;
      }
      case 1: {
        const wb_fuzz::MemoryFile f(text, "fuzz.jsonl");
        prepare(f.path(), Recipe::Sft, bits);
        break;
      }
      case 2: parse_against_scan(text); break;
      case 3: {
        const wb_fuzz::MemoryFile f(text, "fuzz.jsonl");
        inspect(f.path(), bits);
        break;
      }
      case 4: preference_pairs(text, bits); break;
      case 5: prompts(text, bits); break;
      case 6: eval_items(text, bits); break;
    }
  } catch (const Error&) {
  }
  return 0;
}
