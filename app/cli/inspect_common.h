// What the `attention` and `lens` commands share: open the model, tokenize the prompt, inspect it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "cli_common.h"
#include "engine/inspect/inspect.h"

namespace wb::cli {

struct InspectRun {
  OpenedModel opened;
  engine::Inspection inspection;
};

// The flags both commands take (--model, --prompt, --special, --threads).
std::vector<FlagSpec> inspect_flags(std::vector<FlagSpec> extra);

// Loads --model, tokenizes --prompt and runs engine::inspect_prompt with `options`.
InspectRun run_inspection(const Args& a, const engine::InspectOptions& options);

// A probability for people: "41%", or two significant digits below 1% ("0.0021%").
std::string percent(double p);

// A token's text as a quoted JSON string (escapes show whitespace and control bytes).
std::string quoted_piece(const engine::Inspection& in, int32_t id);

// The token texts of the inspected ids, as JSON strings.
nlohmann::json token_texts(const engine::Inspection& in);

}  // namespace wb::cli
