// Reading a training data file: size-capped, and checked to be UTF-8 with a message a user can act on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace engine {

// The whole file (at most 1 GiB, the tokenizer's input cap). Throws engine::Error naming the path.
std::string read_data_file(const std::string& path);

// Throws engine::Error "<label>: line L, byte B: invalid UTF-8 ..." (with a hint for UTF-16 files)
// unless `text` is well-formed UTF-8.
void require_utf8_text(std::string_view text, const std::string& label);

// 1-based line and column of byte `offset` in `text`.
struct LineColumn {
  uint64_t line, column;
};
LineColumn line_column(std::string_view text, size_t offset);

}  // namespace engine
