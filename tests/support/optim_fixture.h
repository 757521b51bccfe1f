// Shared test helper: tests/data/train/optim_fixture.json (torch.optim.AdamW trajectories and LR
// schedule tables, written by tests/tools/make_optim_fixture.py), or null when it is missing.
#pragma once

#include <fstream>

#include <nlohmann/json.hpp>

inline nlohmann::json load_optim_fixture() {
  std::ifstream in(WB_TEST_DATA_DIR "/train/optim_fixture.json");
  if (!in) return {};
  return nlohmann::json::parse(in);
}
