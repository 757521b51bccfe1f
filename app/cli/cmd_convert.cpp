// `convert` (HF directory / GGUF / llm.c .bin -> HF directory or GGUF) and `quantize` (the same
// conversion to a quantized GGUF), both thin flag layers over engine::io::convert_model.
// Progress goes to stderr, one line per stage; the written path is never left half-written.
#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "engine/io/model_convert.h"

namespace wb::cli {

namespace {

engine::io::ExportType parse_type(const std::string& flag, const std::string& value, bool allow_float) {
  const auto t = engine::io::parse_export_type(value);
  const bool is_float = t && (*t == engine::io::ExportType::F32 || *t == engine::io::ExportType::F16);
  if (!t || (!allow_float && is_float))
    throw UsageError("--" + flag + " must be one of " + std::string(allow_float ? "f32, f16, " : "") +
                     "q8_0, q4_0, q4_1, q5_0, q5_1, q5_K; got '" + value + "'");
  return *t;
}

int run_convert(const std::string& command, const std::string& in, const std::string& out,
                const engine::io::ConvertOptions& opts) {
  std::string last;
  auto progress = [&](float f, const std::string& stage) {
    if (stage == last) return;
    last = stage;
    std::cerr << "[" << static_cast<int>(std::lround(100 * f)) << "%] " << stage << "\n";
  };
  const engine::io::ConvertReport r = engine::io::convert_model(in, out, opts, progress);
  if (!r.warning.empty()) std::cerr << "llm-workbench-cli " << command << ": warning: " << r.warning << "\n";
  std::cerr << "wrote " << out << " ("
            << (opts.target == engine::io::ConvertTarget::Gguf
                    ? "GGUF " + engine::io::export_type_name(opts.type)
                    : "HF directory, " + engine::io::export_type_name(opts.type))
            << ", from " << r.source_format << ")\n";
  return 0;
}

}  // namespace

int cmd_convert(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = {
      {"in", true, false, "source: HF directory, .gguf file or llm.c .bin"},
      {"out", true, false, "destination: a .gguf file or a new HF directory"},
      {"to", true, false, "gguf or hf (default: gguf when --out ends in .gguf, else hf)"},
      {"dtype", true, false, "weight type: f32 (default), f16, and for GGUF also q8_0, q4_0, q4_1, q5_0, q5_1, q5_K"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string in = a.required("in");
  const std::string out = a.required("out");
  engine::io::ConvertOptions opts;
  if (a.has("to")) {
    const std::string to = a.str("to");
    if (to == "gguf") opts.target = engine::io::ConvertTarget::Gguf;
    else if (to == "hf") opts.target = engine::io::ConvertTarget::Hf;
    else throw UsageError("--to must be gguf or hf; got '" + to + "'");
  } else {
    opts.target = engine::io::infer_convert_target(out);
  }
  if (a.has("dtype")) opts.type = parse_type("dtype", a.str("dtype"), true);
  if (opts.target == engine::io::ConvertTarget::Hf && opts.type != engine::io::ExportType::F32 &&
      opts.type != engine::io::ExportType::F16)
    throw UsageError("--dtype " + a.str("dtype") + " applies to GGUF output only (HF safetensors are f32 or f16)");
  opts.provenance_json = nlohmann::json{{"created_by", "llm-workbench-cli convert"}, {"converted_from", in}}.dump(2);
  return run_convert("convert", in, out, opts);
}

int cmd_quantize(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = {
      {"in", true, false, "source model (HF directory, .gguf or llm.c .bin)"},
      {"out", true, false, "destination .gguf file"},
      {"type", true, false, "q8_0, q4_0, q4_1, q5_0, q5_1 or q5_K"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string in = a.required("in");
  const std::string out = a.required("out");
  engine::io::ConvertOptions opts;
  opts.target = engine::io::ConvertTarget::Gguf;
  opts.type = parse_type("type", a.required("type"), false);
  return run_convert("quantize", in, out, opts);
}

}  // namespace wb::cli
