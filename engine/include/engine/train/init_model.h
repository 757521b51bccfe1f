// Starting a training run from random weights: a model built from an HF config.json alone (no
// weights file), initialised as Model::init_random does (GPT-2's scheme), with the tokenizer found
// beside the config. `llm-workbench-cli train --model DIR/config.json` uses it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/model.h"

namespace engine {

// True when `path` names a config.json file (what --model accepts besides a model).
bool is_config_json_path(const std::string& path);

// Throws engine::Error naming the file for a missing, malformed or unsupported config.
std::unique_ptr<Model> model_from_config(const std::string& config_json_path, uint64_t seed);

}  // namespace engine
