// Data-file reading helpers: see train/data_file.h.
#include "train/data_file.h"

#include <cstdint>
#include <cstdio>
#include <fstream>

#include "engine/error.h"
#include "io/json_util.h"

namespace engine {

namespace {
constexpr uint64_t k_max_data_bytes = 1ull << 30;
}

std::string read_data_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open the data file");
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path + ": cannot read the data file");
  if (static_cast<uint64_t>(size) > k_max_data_bytes)
    throw Error(path + ": the data file is larger than 1 GiB; split it into smaller files");
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (size > 0 && !in.read(text.data(), size)) throw Error(path + ": read error");
  return text;
}

LineColumn line_column(std::string_view text, size_t offset) {
  LineColumn lc{1, 1};
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') ++lc.line, line_start = i + 1;
  lc.column = offset - line_start + 1;
  return lc;
}

void require_utf8_text(std::string_view text, const std::string& label) {
  if (text.size() >= 2 && ((uint8_t(text[0]) == 0xFF && uint8_t(text[1]) == 0xFE) ||
                           (uint8_t(text[0]) == 0xFE && uint8_t(text[1]) == 0xFF)))
    throw Error(label + ": the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8");
  const auto bad = io::find_invalid_utf8(text);
  if (!bad) return;
  const LineColumn lc = line_column(text, *bad);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", unsigned(uint8_t(text[*bad])));
  throw Error(label + ": line " + std::to_string(lc.line) + ", byte " + std::to_string(lc.column) +
              ": invalid UTF-8 (byte " + hex + "); the data must be UTF-8 text");
}

bool blank_text(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

void for_each_jsonl_line(std::string_view text, const std::string& label,
                         const std::function<void(std::string_view line, uint64_t line_no, const std::string& where)>& row) {
  if (blank_text(text)) throw Error(label + ": the data file is empty");
  require_utf8_text(text, label);
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    if (line_no == 1 && line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
    if (blank_text(line)) continue;
    row(line, line_no, label + ": line " + std::to_string(line_no));
  }
}

nlohmann::json parse_jsonl_object(std::string_view line, const std::string& where) {
  nlohmann::json row;
  try {
    row = io::parse_json_checked(line, where);
  } catch (const Error& e) {
    std::string detail = e.what();
    if (detail.rfind(where + ": ", 0) == 0) detail.erase(0, where.size() + 2);
    throw Error(where + ": bad JSON: " + detail);
  }
  if (!row.is_object()) throw Error(where + ": a row must be a JSON object, got " + io::json_describe(row));
  return row;
}

}  // namespace engine
