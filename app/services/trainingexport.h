// Saving a finished training run somewhere of the user's choosing, in the form they need:
//   "hf"      the (merged, for LoRA) model as our HF directory (safetensors + config + tokenizer);
//   "adapter" the LoRA adapters alone, in PEFT's layout (the run's <out>/adapter, copied);
//   "gguf"    the (merged) model as one GGUF file, f32 / f16 / q8_0 / q4_0, for llama.cpp and friends.
// HF and GGUF go through engine::io::convert_model (what `llm-workbench-cli convert` runs), so the
// result is written atomically and an existing non-empty directory is never merged into.
#pragma once

#include <QString>

#include <functional>

// Writes the export and returns a one-line description of what was written ("GGUF q8_0, 1.2 MB").
// `progress(fraction)` may return false to stop before the next stage. Throws engine::Error with a
// readable message (unknown kind, no adapter in a full fine-tuning run, destination in the way, ...).
QString exportTrainedModel(const QString& runDir, const QString& kind, const QString& destination,
                           const QString& ggufType = QStringLiteral("f32"),
                           const std::function<bool(double)>& progress = {});
