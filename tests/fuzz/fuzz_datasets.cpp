// libFuzzer target: training data files (engine/src/train: text_dataset, chat_dataset,
// training_data, dataset_inspection). Input: one mode byte, then the file's bytes.
//   mode % 4 == 0: pretrain -- prepare_training_data on plain text, a few batches drawn
//   mode % 4 == 1: sft -- prepare_training_data on JSONL chat / Alpaca rows, a few batches drawn
//   mode % 4 == 2: parse_chat_jsonl against scan_chat_jsonl: the two apply the same row checks, so
//                  parse must fail exactly when scan reports a bad row, else agree on the rows
//   mode % 4 == 3: inspect_dataset (the wizard's dataset step) with token counting
// Bits 2-7 of the mode byte pick batch shape, shuffling, split and chat template. Every refusal must be
// an engine::Error; every batch drawn must hold ids inside the vocabulary.
// Preference pairs ({"prompt","chosen","rejected"}) have no loader in the engine yet, so no mode.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "engine/train/chat_dataset.h"
#include "engine/train/data_loader.h"
#include "engine/train/dataset_inspection.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t bits = data[0] >> 2;
  const std::string_view text = wb_fuzz::as_text(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
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
    }
  } catch (const Error&) {
  }
  return 0;
}
