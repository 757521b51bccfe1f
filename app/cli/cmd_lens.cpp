// `lens`: the logit lens over a prompt. For every layer and position, the top-k tokens and their
// probabilities when the final norm and output head are applied to the residual stream there; the last
// row ("layer" L) is the model's real next-token distribution.
// JSON: {"ids","tokens","layers":["embed","1",...,"L"],"lens":[row][position][{"id","text","prob"}],
//        "token_logprob":[...]} (token_logprob[t] = log p(ids[t] | ids[<t]), 0 for the first token).
#include <cmath>
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "inspect_common.h"

namespace wb::cli {

int cmd_lens(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = inspect_flags({
      {"top-k", true, false, "tokens per layer and position (default 5)"},
      {"json", false, false, "print {\"ids\",\"tokens\",\"layers\",\"lens\":[layer][position][{id,text,prob}]}"},
  });
  const Args a(flags, argc, argv, 2);
  engine::InspectOptions options;
  options.attention = false;
  options.top_k = static_cast<int>(a.integer("top-k", 5, 1, 1000));
  const InspectRun run = run_inspection(a, options);
  const engine::Inspection& in = run.inspection;
  auto row_name = [](int row) { return row == 0 ? std::string("embed") : std::to_string(row); };

  if (a.has("json")) {
    nlohmann::json layers = nlohmann::json::array(), lens = nlohmann::json::array();
    for (int row = 0; row < in.lens_rows; ++row) {
      layers.push_back(row_name(row));
      nlohmann::json positions = nlohmann::json::array();
      for (int t = 0; t < in.T; ++t) {
        nlohmann::json top = nlohmann::json::array();
        for (int j = 0; j < in.top_k; ++j) {
          const int32_t id = in.lens_id(row, t, j);
          top.push_back({{"id", id}, {"text", in.piece(id)}, {"prob", in.lens_prob(row, t, j)}});
        }
        positions.push_back(std::move(top));
      }
      lens.push_back(std::move(positions));
    }
    print_json({{"ids", in.ids},
                {"tokens", token_texts(in)},
                {"layers", std::move(layers)},
                {"lens", std::move(lens)},
                {"token_logprob", in.token_logprob}});
    return 0;
  }
  // Text: one block per position, one line per layer with its top prediction.
  auto quoted = [&](int32_t id) { return quoted_piece(in, id); };
  for (int t = 0; t < in.T; ++t) {
    std::cout << "position " << t << " " << quoted(in.ids[t]) << " -> next token by layer\n";
    for (int row = 0; row < in.lens_rows; ++row) {
      std::cout << "  " << row_name(row) << "\t";
      for (int j = 0; j < std::min(in.top_k, 3); ++j)
        std::cout << quoted(in.lens_id(row, t, j)) << " " << percent(in.lens_prob(row, t, j)) << "  ";
      std::cout << "\n";
    }
  }
  std::cout.flush();
  return 0;
}

}  // namespace wb::cli
