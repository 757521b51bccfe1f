// model_from_config: see engine/train/init_model.h.
#include "engine/train/init_model.h"

#include <filesystem>

#include "engine/error.h"
#include "engine/model_loader.h"
#include "io/hf_common.h"
#include "io/json_util.h"

namespace engine {

bool is_config_json_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  return p.extension() == ".json" && std::filesystem::is_regular_file(p, ec);
}

std::unique_ptr<Model> model_from_config(const std::string& config_json_path, uint64_t seed) {
  const io::json cfg = io::parse_json_file(config_json_path, 4u << 20);
  auto model = std::make_unique<Model>(io::parse_hf_model_config(cfg, config_json_path));
  model->init_random(seed);
  const std::string dir = std::filesystem::path(config_json_path).parent_path().string();
  model->set_tokenizer(load_tokenizer_from_directory(dir.empty() ? "." : dir));
  model->source = config_json_path + " (random initialisation, seed " + std::to_string(seed) + ")";
  return model;
}

}  // namespace engine
