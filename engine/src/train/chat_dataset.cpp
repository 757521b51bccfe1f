// JSONL chat / Alpaca data sets: parsing and validation (see engine/train/chat_dataset.h).
//
// Each line is parsed on its own with the engine's checked JSON parser (duplicate keys, NaN literals
// and deep nesting are refused there), so one bad row is reported with its own line number instead of
// poisoning the rest of the file.
#include "engine/train/chat_dataset.h"

#include "engine/error.h"
#include "io/json_util.h"
#include "train/data_file.h"

namespace engine {

namespace {

using io::json;


// A string field that must be present and non-blank.
std::string required_text(const json& row, const char* key, const std::string& label, const std::string& what) {
  const json* v = io::json_find(row, key, label);
  if (!v) throw Error(label + ": " + what + " has no \"" + key + "\" field");
  if (!v->is_string())
    throw Error(label + ": " + what + " \"" + key + "\" must be a string, got " + io::json_describe(*v));
  std::string s = v->get<std::string>();
  if (blank_text(s)) throw Error(label + ": " + what + " \"" + key + "\" is empty");
  return s;
}

ChatExample parse_messages_row(const json& row, const std::string& label) {
  const json* msgs = io::json_find(row, "messages", label);
  if (!msgs) throw Error(label + ": the row has no \"messages\" field (every row must be a chat like the first one)");
  if (!msgs->is_array()) throw Error(label + ": \"messages\" must be an array, got " + io::json_describe(*msgs));
  if (msgs->empty()) throw Error(label + ": \"messages\" is empty");
  ChatExample ex;
  bool has_assistant = false;
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json& m = (*msgs)[i];
    const std::string what = "message " + std::to_string(i + 1);
    if (!m.is_object()) throw Error(label + ": " + what + " must be an object, got " + io::json_describe(m));
    const json* role = io::json_find(m, "role", label);
    if (!role) throw Error(label + ": " + what + " has no \"role\"");
    if (!role->is_string())
      throw Error(label + ": " + what + " \"role\" must be a string, got " + io::json_describe(*role));
    const std::string r = role->get<std::string>();
    if (r != "system" && r != "user" && r != "assistant")
      throw Error(label + ": " + what + " has unknown role " + io::json_describe(*role) +
                  " (expected system, user or assistant)");
    has_assistant = has_assistant || r == "assistant";
    ex.messages.push_back({r, required_text(m, "content", label, what)});
  }
  if (!has_assistant) throw Error(label + ": the conversation has no assistant message, so there is nothing to learn");
  return ex;
}

ChatExample parse_alpaca_row(const json& row, const std::string& label) {
  if (!io::json_find(row, "instruction", label))
    throw Error(label + ": the row has no \"instruction\" field (every row must be an Alpaca row like the first one)");
  std::string user = required_text(row, "instruction", label, "the row");
  if (const json* in = io::json_find(row, "input", label); in && !in->is_null()) {
    if (!in->is_string()) throw Error(label + ": \"input\" must be a string, got " + io::json_describe(*in));
    if (!blank_text(in->get<std::string>())) user += "\n\n" + in->get<std::string>();
  }
  ChatExample ex;
  ex.messages.push_back({"user", std::move(user)});
  ex.messages.push_back({"assistant", required_text(row, "output", label, "the row")});
  return ex;
}

}  // namespace

const char* chat_data_format_name(ChatDataFormat f) { return f == ChatDataFormat::Alpaca ? "alpaca" : "messages"; }

ChatDataScan scan_chat_jsonl(std::string_view text, const std::string& label, size_t max_problems) {
  ChatDataScan scan;
  bool format_known = false;
  for_each_jsonl_line(text, label, [&](std::string_view line, uint64_t line_no, const std::string& where) {
    ++scan.rows;
    // Each check throws "<where>: <what>"; the scan keeps <what> with the line and goes on.
    try {
      const json row = parse_jsonl_object(line, where);
      if (!format_known) {
        // The first readable row decides the format for the whole file.
        if (row.contains("messages")) scan.dataset.format = ChatDataFormat::Messages;
        else if (row.contains("instruction")) scan.dataset.format = ChatDataFormat::Alpaca;
        else
          throw Error(where +
                      ": neither a chat row {\"messages\": [...]} nor an Alpaca row {\"instruction\", \"output\"}");
        format_known = true;
      }
      ChatExample ex = scan.dataset.format == ChatDataFormat::Messages ? parse_messages_row(row, where)
                                                                       : parse_alpaca_row(row, where);
      ex.line = line_no;
      scan.dataset.examples.push_back(std::move(ex));
    } catch (const Error& e) {
      ++scan.bad_rows;
      if (scan.problems.size() < max_problems) {
        std::string what = e.what();
        if (what.rfind(where + ": ", 0) == 0) what.erase(0, where.size() + 2);
        scan.problems.push_back({line_no, std::move(what)});
      }
    }
  });
  return scan;
}

ChatDataset parse_chat_jsonl(std::string_view text, const std::string& label) {
  ChatDataScan scan = scan_chat_jsonl(text, label, 1);
  if (!scan.problems.empty())
    throw Error(label + ": line " + std::to_string(scan.problems.front().line) + ": " + scan.problems.front().message);
  if (scan.dataset.examples.empty()) throw Error(label + ": the data file has no rows");
  return std::move(scan.dataset);
}

ChatDataset load_chat_dataset(const std::string& path) { return parse_chat_jsonl(read_data_file(path), path); }

}  // namespace engine
