// Training checkpoints: see engine/train/checkpoint.h for the file layout and its invariants.
#include "engine/train/checkpoint.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "engine/error.h"
#include "engine/io/safetensors.h"
#include "io/json_util.h"

namespace engine {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_format = "llm-workbench-train-checkpoint";
constexpr const char* k_version = "1";
const char* const k_kinds[3] = {"value/", "adam_m/", "adam_v/"};

uint64_t fnv1a64(const void* data, uint64_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string hex64(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string checkpoint_name(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "ckpt_%08" PRId64 ".safetensors", step);
  return buf;
}

// The step of a checkpoint file name, or -1.
int64_t step_of(const std::string& name) {
  constexpr std::string_view prefix = "ckpt_", suffix = ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

const std::string& meta(const std::map<std::string, std::string>& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  if (it == m.end()) throw Error(path + ": not a training checkpoint (metadata '" + key + "' missing)");
  return it->second;
}

uint64_t meta_uint(const std::map<std::string, std::string>& m, const std::string& key, const std::string& path) {
  const std::string& s = meta(m, key, path);
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
    throw Error(path + ": metadata '" + key + "' must be a non-negative integer, got '" + s.substr(0, 40) + "'");
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) throw Error(path + ": metadata '" + key + "' is out of range");
  return v;
}

}  // namespace

std::string save_checkpoint(const std::string& dir, const AdamW& opt, const TrainState& state, int keep) {
  if (opt.sharded())
    throw Error("save_checkpoint: the optimizer holds one shard of the state; gather the whole state first "
                "(engine/train/zero_shard.h)");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create the checkpoint directory: " + ec.message());
  // Temp files of writes interrupted by a crash (io::write_file_atomic names them ".<name>.tmp-...").
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(".ckpt_", 0) == 0 && n.find(".tmp-") != std::string::npos) fs::remove(e.path(), ec);
  }

  std::vector<io::StTensorToWrite> tensors;
  io::json checksums = io::json::object();
  const auto& ts = opt.tensors();
  for (size_t i = 0; i < ts.size(); ++i) {
    const float* bufs[3] = {ts[i].value, opt.first_moment(i).data(), opt.second_moment(i).data()};
    for (int k = 0; k < 3; ++k) {
      const std::string name = k_kinds[k] + ts[i].name;
      tensors.push_back({name, io::StDType::F32, {ts[i].numel}, bufs[k]});
      checksums[name] = hex64(fnv1a64(bufs[k], ts[i].numel * sizeof(float)));
    }
  }
  if (!state.objective_state.empty())
    checksums["objective_state"] = hex64(fnv1a64(state.objective_state.data(), state.objective_state.size()));
  std::map<std::string, std::string> metadata = {
      {"format", k_format},
      {"version", k_version},
      {"step", std::to_string(state.step)},
      {"adam_t", std::to_string(opt.step_count())},
      {"data_epoch", std::to_string(state.data.epoch)},
      {"data_cursor", std::to_string(state.data.cursor)},
      {"seed", std::to_string(state.seed)},
      {"config", state.config_json},
      {"checksums", checksums.dump()},
  };
  if (!state.objective_state.empty()) metadata["objective_state"] = state.objective_state;
  const std::string path = (fs::path(dir) / checkpoint_name(state.step)).string();
  io::write_safetensors(path, tensors, metadata);

  if (keep > 0) {
    const std::vector<std::string> all = list_checkpoints(dir);
    for (size_t i = size_t(keep); i < all.size(); ++i) fs::remove(all[i], ec);
  }
  return path;
}

TrainState load_checkpoint(const std::string& path, AdamW& opt) {
  const auto file = io::SafetensorsFile::open(path);
  const auto& md = file->metadata();
  if (meta(md, "format", path) != k_format)
    throw Error(path + ": not a training checkpoint (format '" + md.at("format") + "')");
  if (meta(md, "version", path) != k_version)
    throw Error(path + ": checkpoint version " + md.at("version") + " is not supported (this build reads version 1)");
  TrainState st;
  st.step = static_cast<int64_t>(std::min<uint64_t>(meta_uint(md, "step", path), INT64_MAX));
  const uint64_t adam_t = std::min<uint64_t>(meta_uint(md, "adam_t", path), INT64_MAX);
  st.data.epoch = meta_uint(md, "data_epoch", path);
  st.data.cursor = meta_uint(md, "data_cursor", path);
  st.seed = meta_uint(md, "seed", path);
  st.config_json = meta(md, "config", path);
  const io::json sums = io::parse_json_checked(meta(md, "checksums", path), path + ": metadata 'checksums'");
  if (!sums.is_object()) throw Error(path + ": metadata 'checksums' must be a JSON object");
  if (const auto it = md.find("objective_state"); it != md.end()) {
    const io::json* sum = sums.contains("objective_state") ? &sums["objective_state"] : nullptr;
    if (!sum || !sum->is_string() || sum->get<std::string>() != hex64(fnv1a64(it->second.data(), it->second.size())))
      throw Error(path + ": metadata 'objective_state' fails its checksum (the file is corrupt)");
    st.objective_state = it->second;
  }

  // Validate everything first: nothing is written into the optimizer until the whole file checks out.
  const auto& ts = opt.tensors();
  std::vector<std::array<const io::StTensor*, 3>> found(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      const std::string name = k_kinds[k] + ts[i].name;
      const io::StTensor* t = file->find(name);
      if (!t)
        throw Error(path + ": tensor '" + name +
                    "' is missing (was the checkpoint made with another model or LoRA setting?)");
      if (t->dtype != io::StDType::F32 || t->numel() != ts[i].numel)
        throw Error(path + ": tensor '" + name + "' has " + std::to_string(t->numel()) + " values, the model needs " +
                    std::to_string(ts[i].numel) + " (another model shape?)");
      const io::json* sum = sums.contains(name) ? &sums[name] : nullptr;
      if (!sum || !sum->is_string()) throw Error(path + ": no checksum for tensor '" + name + "'");
      if (sum->get<std::string>() != hex64(fnv1a64(t->data, t->nbytes)))
        throw Error(path + ": tensor '" + name + "' fails its checksum (the file is corrupt)");
      found[i][size_t(k)] = t;
    }
  }
  if (file->tensors().size() != 3 * ts.size())
    throw Error(path + ": the checkpoint holds " + std::to_string(file->tensors().size() / 3) +
                " trainable tensors, the model has " + std::to_string(ts.size()) + " (another model or LoRA setting?)");

  for (size_t i = 0; i < ts.size(); ++i) {
    std::memcpy(ts[i].value, found[i][0]->data, found[i][0]->nbytes);
    // A sharded optimizer takes its part of each tensor's moments: a checkpoint holds the whole state whatever the
    // world size and sharding that wrote it.
    const size_t skip = opt.moment_offset(i) * sizeof(float);
    std::memcpy(opt.first_moment(i).data(), found[i][1]->data + skip, opt.first_moment(i).size() * sizeof(float));
    std::memcpy(opt.second_moment(i).data(), found[i][2]->data + skip, opt.second_moment(i).size() * sizeof(float));
  }
  opt.set_step_count(static_cast<int64_t>(adam_t));
  return st;
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const int64_t step = step_of(e.path().filename().string());
    if (step >= 0 && e.is_regular_file(ec)) found.emplace_back(step, e.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

TrainState load_latest_checkpoint(const std::string& dir, AdamW& opt, std::string* path_loaded,
                                  std::vector<std::string>* warnings) {
  const std::vector<std::string> all = list_checkpoints(dir);
  if (all.empty()) throw Error(dir + ": no checkpoint to resume from");
  std::string last_error;
  for (const std::string& p : all) {
    try {
      TrainState st = load_checkpoint(p, opt);
      if (path_loaded) *path_loaded = p;
      return st;
    } catch (const Error& e) {
      last_error = e.what();
      if (warnings) warnings->push_back(std::string("skipping unreadable checkpoint: ") + e.what());
    }
  }
  throw Error(dir + ": no loadable checkpoint (" + std::to_string(all.size()) + " tried; last: " + last_error + ")");
}

}  // namespace engine
