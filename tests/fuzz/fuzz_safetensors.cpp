// libFuzzer target: any byte string handed to the safetensors reader must end in a valid
// SafetensorsFile or an engine::Error — never a crash, hang, sanitizer report or other exception.
// Accepted inputs are walked completely (every tensor byte read, float tensors converted), so a
// data pointer or size that escaped validation shows up as an ASan out-of-bounds read.
// The same input is also read as an HF config.json: the checked JSON parser (which guards config.json
// and tokenizer.json too), then the model-config reader of every supported model_type, whose
// refusals must be engine::Errors as well.
// Build and run: see README.md in this directory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/error.h"
#include "engine/io/safetensors.h"
#include "io/hf_common.h"
#include "io/json_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = engine::io::SafetensorsFile::from_memory(data, size, "fuzz.safetensors");
    volatile uint64_t sink = 0;
    for (const auto& t : f->tensors()) {
      for (uint64_t i = 0; i < t.nbytes; ++i) sink = sink + t.data[i];
      using engine::io::StDType;
      if (t.dtype == StDType::F32 || t.dtype == StDType::F16 || t.dtype == StDType::BF16 || t.dtype == StDType::F64)
        sink = sink + f->read_f32(t).size();
    }
    for (const auto& [k, v] : f->metadata()) sink = sink + k.size() + v.size();
  } catch (const engine::Error&) {
  }
  try {
    const engine::io::json cfg =
        engine::io::parse_json_checked(std::string_view(reinterpret_cast<const char*>(data), size), "config.json");
    const engine::ModelConfig mc = engine::io::parse_hf_model_config(cfg, "config.json");
    mc.validate("config.json");
    volatile uint64_t sink = mc.parameter_count() + static_cast<uint64_t>(mc.head_size() + mc.kv_width());
    (void)sink;
  } catch (const engine::Error&) {
  }
  return 0;
}
