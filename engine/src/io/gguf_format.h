// Format facts and validation rules shared by the GGUF reader and writer (internal).
//
// One place for the limits, so the writer refuses exactly what the reader would refuse and a file
// we write always reads back. Numbers follow ggml-org/ggml docs/gguf.md; the caps are ours, chosen
// far above anything a real model needs and far below anything that could exhaust memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/io/gguf.h"

namespace engine::io::gguf_detail {

constexpr uint32_t k_magic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t k_default_alignment = 32;
constexpr uint32_t k_max_alignment = 1u << 20;        // 1 MiB: a page or a huge page is the most anyone needs
constexpr uint64_t k_max_key_bytes = 65535;           // spec
constexpr uint64_t k_max_tensor_name_bytes = 64;      // spec ("at most 64 bytes")
constexpr uint64_t k_max_string_bytes = 64ull << 20;  // 64 MiB: chat templates are KBs, tokens bytes
constexpr uint32_t k_max_dims = 4;                    // spec ("currently at most 4")
constexpr uint64_t k_max_dim = uint64_t(1) << 62;     // refuses int64-negative values and stride wrap

// Per-item minimum sizes in the file, used to bound counts by the bytes remaining before allocating.
constexpr uint64_t k_min_kv_bytes = 8 + 1 + 4 + 1;                   // key len, 1-byte key, type, u8 value
constexpr uint64_t k_min_tensor_info_bytes = 8 + 1 + 4 + 8 + 4 + 8;  // name len, 1-byte name, n_dims, ne0, type, offset

bool is_known_value_type(uint32_t t);
// Bytes per element of a fixed-size value type (0 for STRING and ARRAY).
uint64_t value_type_size(GgufType t);

struct GgmlTypeInfo {
  uint32_t id;
  const char* name;
  uint64_t block_elems;  // 0: recognised name but unsupported/removed
  uint64_t block_bytes;
};
// Info for any ggml type number we can name (supported or not); nullptr when we cannot even name it.
const GgmlTypeInfo* ggml_type_info(uint32_t id);
// Info when the type is one we read and write; nullptr otherwise.
const GgmlTypeInfo* supported_ggml_type(uint32_t id);
// "type 3 (Q4_1) is not supported", "type 4 (removed Q4_2) ...", "unknown type 99".
std::string unsupported_type_text(uint32_t id);

// nullopt when `key` is a valid key, else the reason ("is empty", "byte 3 is 0x80, not printable ASCII").
std::optional<std::string> key_problem(std::string_view key);
// The same for a tensor name (non-empty, <= 64 bytes, no NUL or other control bytes).
std::optional<std::string> tensor_name_problem(std::string_view name);
// The same for general.alignment.
std::optional<std::string> alignment_problem(uint64_t alignment);

// A name or key fit for an error message: control bytes as \xNN, at most ~80 bytes, quoted.
std::string printable(std::string_view s);

}  // namespace engine::io::gguf_detail
