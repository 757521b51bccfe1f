// inspect_dataset: see engine/train/dataset_inspection.h.
#include "engine/train/dataset_inspection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "engine/align/prompt_data.h"
#include "engine/error.h"
#include "engine/tokenizer.h"
#include "engine/train/preference_data.h"
#include "train/data_file.h"

namespace engine {

namespace {

bool looks_like_jsonl(std::string_view text) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // BOM
  i = text.find_first_not_of(" \t\r\n", i);
  return i != std::string_view::npos && text[i] == '{';
}

enum class JsonlKind { Chats, Pairs, Prompts };

// The first readable row decides, as each loader decides its format: {prompt, chosen, rejected} are preference
// pairs, {prompt, answer} prompts with checkable answers, anything else chats (whose scan names what is wrong).
JsonlKind detect_jsonl_kind(std::string_view text, const std::string& label) {
  std::optional<JsonlKind> kind;
  for_each_jsonl_line(text, label, [&](std::string_view line, uint64_t, const std::string& where) {
    if (kind) return;
    try {
      const nlohmann::json row = parse_jsonl_object(line, where);
      if (row.contains("chosen") && row.contains("rejected")) kind = JsonlKind::Pairs;
      else if (row.contains("prompt") && row.contains("answer")) kind = JsonlKind::Prompts;
      else kind = JsonlKind::Chats;
    } catch (const Error&) {
      // Not readable: the next row decides, and the scan reports this one.
    }
  });
  return kind.value_or(JsonlKind::Chats);
}

// Calls `row` for each non-blank line; what it throws becomes a problem of that line (its "<file>: line N: "
// prefix cut), and the scan goes on.
template <typename Row>
void scan_rows(std::string_view text, const DatasetInspectionOptions& o, DatasetInspection& r, Row&& row) {
  for_each_jsonl_line(text, o.path, [&](std::string_view line, uint64_t line_no, const std::string& where) {
    ++r.rows;
    try {
      row(line, line_no, where);
    } catch (const Error& e) {
      ++r.bad_rows;
      if (r.problems.size() < o.max_problems) {
        std::string what = e.what();
        if (what.rfind(where + ": ", 0) == 0) what.erase(0, where.size() + 2);
        r.problems.push_back({line_no, std::move(what)});
      }
    }
  });
}

// Folds one row's token count into the totals.
void count_row(DatasetInspection& r, uint64_t n, uint64_t counted) {
  r.total_tokens += n;
  r.min_row_tokens = counted == 0 ? n : std::min(r.min_row_tokens, n);
  r.max_row_tokens = std::max(r.max_row_tokens, n);
}

// The split training makes of n rows: the last val_fraction of them held out.
void split_rows(DatasetInspection& r, size_t n, double val_fraction) {
  const size_t n_val = static_cast<size_t>(double(n) * val_fraction);
  r.val_rows = n_val;
  r.train_rows = n - n_val;
}

// Counts the tokens of n rows, `row_tokens(i)` giving row i's count and whether it is over the training window,
// into the totals and the train / validation split of split_rows. Stops, counts unfinished, when `progress`
// cancels.
template <typename RowTokens>
void count_rows(size_t n, const InspectionProgress& progress, DatasetInspection& r, RowTokens&& row_tokens) {
  for (size_t i = 0; i < n; ++i) {
    if (progress && !progress(double(i) / double(n))) return;
    const auto [len, over] = row_tokens(i);
    count_row(r, len, i);
    if (over) ++r.rows_over_seq;
    (i < r.train_rows ? r.train_tokens : r.val_tokens) += len;
  }
  r.mean_row_tokens = n ? double(r.total_tokens) / double(n) : 0.0;
  r.tokens_counted = true;
}

void inspect_chats(std::string_view text, const DatasetInspectionOptions& o, const Tokenizer* tok,
                   const InspectionProgress& progress, DatasetInspection& r) {
  ChatDataScan scan = scan_chat_jsonl(text, o.path, o.max_problems);
  r.format = chat_data_format_name(scan.dataset.format);
  r.recipe = Recipe::Sft;
  r.rows = scan.rows;
  r.bad_rows = scan.bad_rows;
  r.problems = std::move(scan.problems);
  const std::vector<ChatExample>& rows = scan.dataset.examples;
  for (size_t i = 0; i < rows.size() && i < o.preview_rows; ++i) r.preview.push_back(rows[i]);
  split_rows(r, rows.size(), o.val_fraction);
  if (!tok) return;
  ChatDataset one;
  one.format = scan.dataset.format;
  one.examples.resize(1);
  count_rows(rows.size(), progress, r, [&](size_t i) {
    one.examples[0] = rows[i];
    const uint64_t len = encode_chat_dataset(one, *tok, o.chat_template)[0].ids.size();
    return std::pair{len, len > uint64_t(o.seq)};
  });
}

void inspect_pairs(std::string_view text, const DatasetInspectionOptions& o, const Tokenizer* tok,
                   const InspectionProgress& progress, DatasetInspection& r) {
  r.format = "pairs";
  r.recipe = Recipe::Dpo;
  std::vector<PreferencePair> pairs;
  scan_rows(text, o, r, [&](std::string_view line, uint64_t line_no, const std::string& where) {
    pairs.push_back(parse_preference_row(line, line_no, where));
  });
  for (size_t i = 0; i < pairs.size() && i < o.preview_rows; ++i)
    r.preview.push_back({{{"prompt", pairs[i].prompt.back().content},
                          {"chosen", pairs[i].chosen},
                          {"rejected", pairs[i].rejected}},
                         pairs[i].line});
  split_rows(r, pairs.size(), o.val_fraction);
  if (!tok) return;
  count_rows(pairs.size(), progress, r, [&](size_t i) {
    const size_t chosen = encode_prompt_reply(*tok, o.chat_template, pairs[i].prompt, pairs[i].chosen).ids.size();
    const size_t rejected = encode_prompt_reply(*tok, o.chat_template, pairs[i].prompt, pairs[i].rejected).ids.size();
    return std::pair{uint64_t(chosen + rejected), std::max(chosen, rejected) > size_t(o.seq)};
  });
}

void inspect_prompts(std::string_view text, const DatasetInspectionOptions& o, const Tokenizer* tok,
                     const InspectionProgress& progress, DatasetInspection& r) {
  r.format = "prompts";
  r.recipe = Recipe::Grpo;
  std::vector<PromptItem> items;
  scan_rows(text, o, r, [&](std::string_view line, uint64_t line_no, const std::string& where) {
    items.push_back(parse_prompt_row(line, line_no, where));
  });
  for (size_t i = 0; i < items.size() && i < o.preview_rows; ++i)
    r.preview.push_back({{{"prompt", items[i].prompt},
                          {"answer", items[i].answer},
                          {"kind", items[i].kind == PromptKind::Arith ? "arith" : "facts"}},
                         items[i].line});
  const size_t n = items.size();
  if (!tok) {
    split_rows(r, n, o.val_fraction);
    return;
  }
  std::vector<size_t> lengths;
  for (size_t i = 0; i < n; ++i) {
    if (progress && !progress(double(i) / double(n))) return;
    lengths.push_back(encode_prompts({items[i]}, *tok, o.chat_template).ids[0].size());
    count_row(r, lengths.back(), i);
    if (lengths.back() + size_t(o.max_new_tokens) + 1 > size_t(o.seq)) ++r.rows_over_seq;
  }
  // Training skips the prompts without room for a completion, then holds out the last share of the rest.
  split_rows(r, n - r.rows_over_seq, o.val_fraction);
  size_t seen = 0;
  for (size_t i = 0; i < n; ++i) {
    if (lengths[i] + size_t(o.max_new_tokens) + 1 > size_t(o.seq)) continue;
    (seen++ < r.train_rows ? r.train_tokens : r.val_tokens) += lengths[i];
  }
  r.mean_row_tokens = n ? double(r.total_tokens) / double(n) : 0.0;
  r.tokens_counted = true;
}

void inspect_text(std::string_view text, const DatasetInspectionOptions& o, const Tokenizer* tok,
                  const InspectionProgress& progress, DatasetInspection& r) {
  require_utf8_text(text, o.path);
  r.format = "text";
  r.recipe = Recipe::Pretrain;
  uint64_t counted = 0, line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const size_t next = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view line = text.substr(pos, next - pos);  // with its newline: the stream has it too
    ++line_no;
    pos = next;
    if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;
    ++r.rows;
    if (r.preview.size() < o.preview_rows) {
      std::string shown(line);
      while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r')) shown.pop_back();
      r.preview.push_back({{{"text", shown}}, line_no});
    }
    if (!tok) continue;
    if (progress && (r.rows % 64) == 1 && !progress(double(pos) / double(text.size()))) return;
    count_row(r, tok->encode(line, /*allow_special=*/false).size(), counted++);
  }
  if (!tok) return;
  r.mean_row_tokens = counted ? double(r.total_tokens) / double(counted) : 0.0;
  r.val_tokens = static_cast<uint64_t>(std::floor(double(r.total_tokens) * o.val_fraction));
  r.train_tokens = r.total_tokens - r.val_tokens;
  r.tokens_counted = true;
}

}  // namespace

DatasetInspection inspect_dataset(const DatasetInspectionOptions& o, const Tokenizer* tok,
                                  const InspectionProgress& progress) {
  if (!(o.val_fraction >= 0.0 && o.val_fraction <= 0.5))
    throw Error("the validation fraction must be in [0, 0.5], got " + std::to_string(o.val_fraction));
  const std::string text = read_data_file(o.path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw Error(o.path + ": the data file is empty");
  DatasetInspection r;
  if (!looks_like_jsonl(text)) {
    inspect_text(text, o, tok, progress, r);
  } else {
    switch (detect_jsonl_kind(text, o.path)) {
      case JsonlKind::Pairs: inspect_pairs(text, o, tok, progress, r); break;
      case JsonlKind::Prompts: inspect_prompts(text, o, tok, progress, r); break;
      case JsonlKind::Chats: inspect_chats(text, o, tok, progress, r); break;
    }
  }
  if (progress && r.tokens_counted) progress(1.0);
  return r;
}

}  // namespace engine
