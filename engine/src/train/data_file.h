// Reading a training data file: size-capped, and checked to be UTF-8 with a message a user can act on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
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

// True when `s` holds only spaces, tabs and line ends.
bool blank_text(std::string_view s);

// JSONL: calls `row(line, line_no, where)` for each non-blank line of `text` (a UTF-8 BOM before the first
// line skipped), `where` being "<label>: line N". Throws engine::Error for an empty or non-UTF-8 text
// first; what `row` throws passes through.
void for_each_jsonl_line(std::string_view text, const std::string& label,
                         const std::function<void(std::string_view line, uint64_t line_no, const std::string& where)>& row);

// One JSONL line as a JSON object; throws "<where>: bad JSON: ..." or "<where>: a row must be a JSON
// object, got ...".
nlohmann::json parse_jsonl_object(std::string_view line, const std::string& where);

}  // namespace engine
