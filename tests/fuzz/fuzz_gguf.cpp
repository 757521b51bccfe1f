// libFuzzer target: GGUF files (engine/src/io/gguf_reader.cpp). Any byte string must end in a valid
// GgufFile or an engine::Error -- never a crash, hang, sanitizer report or other exception.
// An accepted file is then used as the model loader uses it: every metadata value through every
// typed getter (a wrong type must be an Error), every tensor byte read (a data pointer or size that
// escaped validation is an ASan out-of-bounds read), and the first rows of every tensor of an engine
// dtype scanned for non-finite values and dequantized, after the loader's aligned copy.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/quant.h"

namespace {

using engine::io::GgufFile;
using engine::io::GgufTensor;

volatile uint64_t g_sink = 0;

template <class F>
void ignore_errors(F&& f) {
  try {
    f();
  } catch (const engine::Error&) {
  }
}

void use_metadata(const GgufFile& f) {
  for (const auto& entry : f.metadata()) {
    const std::string& key = entry.first;  // named: clang 14 lambdas cannot capture structured bindings
    const engine::io::GgufValue& value = entry.second;
    g_sink = g_sink + key.size() + value.type_text().size() + value.array_size();
    ignore_errors([&] { g_sink = g_sink + f.get_u32(key); });
    ignore_errors([&] { g_sink = g_sink + f.get_i32(key); });
    ignore_errors([&] { g_sink = g_sink + f.get_u64(key); });
    ignore_errors([&] { g_sink = g_sink + f.get_uint(key); });
    ignore_errors([&] { g_sink = g_sink + static_cast<uint64_t>(f.get_f32(key) != 0); });
    ignore_errors([&] { g_sink = g_sink + f.get_bool(key); });
    ignore_errors([&] { g_sink = g_sink + f.get_string(key).size(); });
    ignore_errors([&] { g_sink = g_sink + f.get_string_array(key).size(); });
    ignore_errors([&] { g_sink = g_sink + f.get_f32_array(key).size(); });
    ignore_errors([&] { g_sink = g_sink + f.get_i32_array(key).size(); });
    ignore_errors([&] { g_sink = g_sink + value.bool_array_of(key).size(); });
  }
  ignore_errors([&] { g_sink = g_sink + f.architecture().size(); });
}

void use_tensor(const GgufFile& f, const GgufTensor& t) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
  g_sink = g_sink + sum;
  if (f.find(t.name) != &t) __builtin_trap();  // names are unique, so the index finds this very tensor

  const std::optional<engine::DType> dtype = engine::io::ggml_to_dtype(t.type);
  if (!dtype || t.shape.empty()) return;
  const uint64_t C = t.shape[0];
  const uint64_t block = engine::dtype_block_elems(*dtype);
  if (C == 0 || C % block != 0 || C > (1u << 20)) return;  // the loader refuses such rows before this point
  const uint64_t rows = std::min<uint64_t>(4, t.numel / C);
  if (rows == 0) return;
  // The loader copies tensors whose offset is not 8-aligned (general.alignment may be 1..); so do we.
  const uint64_t bytes = engine::dtype_bytes(*dtype, rows * C);
  std::vector<uint64_t> aligned((bytes + 7) / 8);
  std::memcpy(aligned.data(), t.data, bytes);
  g_sink = g_sink + static_cast<uint64_t>(engine::first_nonfinite(*dtype, aligned.data(), int64_t(rows * C)) + 1);
  std::vector<float> out(rows * C);
  engine::dequantize_rows(*dtype, aligned.data(), static_cast<int>(C), 0, static_cast<int64_t>(rows), out.data());
  for (float v : out) g_sink = g_sink + (v == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto f = GgufFile::from_memory(data, size, "fuzz.gguf");
    use_metadata(*f);
    for (const GgufTensor& t : f->tensors()) use_tensor(*f, t);
  } catch (const engine::Error&) {
  }
  return 0;
}
