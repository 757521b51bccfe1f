// Helpers shared by the CLI commands: opening a model with its backend, JSON output.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/model.h"

namespace wb::cli {

struct OpenedModel {
  std::unique_ptr<engine::Model> model;
  engine::BackendChoice backend;
};

// Loads the model at `path` and picks its backend (threads <= 0: all cores).
OpenedModel open_model(const std::string& path, int threads);

// Prints one JSON value on stdout; invalid UTF-8 in strings (a token cut mid-character) is replaced
// with U+FFFD rather than failing.
void print_json(const nlohmann::json& value);

// Peak resident set size of this process in MiB.
double peak_rss_mb();

// The tokenizer of a model, or a clear error when it has none.
const engine::Tokenizer& require_tokenizer(const engine::Model& model, const std::string& path);

}  // namespace wb::cli
