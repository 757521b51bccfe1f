// libFuzzer target: whole-model loading (engine::load_model), not only the file readers: the config or metadata
// that shapes a Model, the tensors read into it, then a short greedy generation, so that a model the loader
// accepts but whose shapes disagree with its weights shows up as an out-of-bounds access. Input: one mode byte,
// then
//   mode % 3 == 0: a Hugging Face directory: config.json, NUL, model.safetensors (written to a private directory
//                  of this process; bit 2 loads the .safetensors path instead of the directory);
//   mode % 3 == 1: a GGUF file (bit 2: LoadOptions::dequantize, bit 3: no packing);
//   mode % 3 == 2: an llm.c checkpoint.
// Oracles beyond "no crash, only engine::Error": an accepted model's config validates, its parameter count is
// positive, and two greedy tokens from a two-token prompt are ids inside its vocabulary.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/generator.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "fuzz_common.h"

namespace {

using namespace engine;

// One directory per process (parallel jobs must not share it), reused by every input.
const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string t = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/wb-fuzz-model-XXXXXX";
    if (!mkdtemp(t.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    return t;
  }();
  return dir;
}

void write_file(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();  // the harness, not the code under test
  }
}

Backend& backend() {
  static std::unique_ptr<Backend> be = make_cpu_backend(1);
  return *be;
}

void exercise(const Model& model) {
  const ModelConfig& c = model.config();
  c.validate("fuzz");  // an accepted model's config must be valid: a throw here is a finding
  if (c.parameter_count() == 0) __builtin_trap();
  if (c.max_seq_len < 1 || c.vocab_size < 1) __builtin_trap();
  const std::vector<int32_t> prompt = {0, c.vocab_size - 1};
  const int capacity = std::min(c.max_seq_len, 4);
  GenerateParams p;
  p.max_tokens = 2;
  p.sampler.temperature = 0;
  p.stop_at_eos = false;
  Generator gen(model, backend(), capacity);
  const GenerationResult r =
      gen.generate(std::span<const int32_t>(prompt.data(), std::min<size_t>(prompt.size(), size_t(capacity - 1))), p);
  for (const GeneratedToken& t : r.tokens)
    if (t.id < 0 || t.id >= c.vocab_size) __builtin_trap();
}

std::unique_ptr<Model> load(uint8_t mode, std::string_view rest) {
  switch (mode % 3) {
    case 0: {
      const std::vector<std::string_view> parts = wb_fuzz::split_parts(rest, 2);
      const std::string& dir = scratch_dir();
      write_file(dir + "/config.json", parts[0]);
      write_file(dir + "/model.safetensors", parts[1]);
      return load_model((mode & 4) ? dir + "/model.safetensors" : dir);
    }
    case 1: {
      wb_fuzz::MemoryFile file(rest, "model.gguf");
      LoadOptions o;
      o.dequantize = mode & 4;
      o.pack = !(mode & 8);
      return load_model(file.path(), {}, o);
    }
    default: {
      wb_fuzz::MemoryFile file(rest, "model.bin");
      return load_model(file.path());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::unique_ptr<Model> model;
  try {
    model = load(data[0], rest);
  } catch (const Error&) {
    return 0;
  }
  exercise(*model);  // no exception allowed: the loader accepted this model
  return 0;
}
