// inspect_dataset: see engine/train/dataset_inspection.h.
#include "engine/train/dataset_inspection.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "train/data_file.h"

namespace engine {

namespace {

bool looks_like_jsonl(std::string_view text) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // BOM
  i = text.find_first_not_of(" \t\r\n", i);
  return i != std::string_view::npos && text[i] == '{';
}

// Folds one row's token count into the totals.
void count_row(DatasetInspection& r, uint64_t n, uint64_t counted) {
  r.total_tokens += n;
  r.min_row_tokens = counted == 0 ? n : std::min(r.min_row_tokens, n);
  r.max_row_tokens = std::max(r.max_row_tokens, n);
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
  const size_t n = rows.size();
  const size_t n_val = static_cast<size_t>(double(n) * o.val_fraction);
  r.val_rows = n_val;
  r.train_rows = n - n_val;
  if (!tok) return;
  ChatDataset one;
  one.format = scan.dataset.format;
  one.examples.resize(1);
  for (size_t i = 0; i < n; ++i) {
    if (progress && !progress(double(i) / double(n))) return;
    one.examples[0] = rows[i];
    const uint64_t len = encode_chat_dataset(one, *tok, o.chat_template)[0].ids.size();
    count_row(r, len, i);
    if (len > uint64_t(o.seq)) ++r.rows_over_seq;
    (i < n - n_val ? r.train_tokens : r.val_tokens) += len;
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
  if (looks_like_jsonl(text)) inspect_chats(text, o, tok, progress, r);
  else inspect_text(text, o, tok, progress, r);
  if (progress && r.tokens_counted) progress(1.0);
  return r;
}

}  // namespace engine
