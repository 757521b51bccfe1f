// cli_common.h helpers.
#include "cli_common.h"

#include <sys/resource.h>

#include <iostream>

#include "engine/error.h"
#include "engine/model_loader.h"

namespace wb::cli {

OpenedModel open_model(const std::string& path, int threads) {
  OpenedModel m;
  m.model = engine::load_model(path);
  m.backend = engine::choose_backend(engine::BackendPreference::Auto, threads);
  return m;
}

void print_json(const nlohmann::json& value) {
  std::cout << value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

const engine::Tokenizer& require_tokenizer(const engine::Model& model, const std::string& path) {
  if (!model.tokenizer())
    throw engine::Error(path +
                        ": the model has no tokenizer (expected tokenizer.json or vocab.json + merges.txt beside it)");
  return *model.tokenizer();
}

}  // namespace wb::cli
