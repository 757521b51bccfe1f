// BpeTrainer: counts pre-tokenizer pieces, then learns merges by pair frequency (see tokenizer_trainer.h).
//
// Each distinct piece is a "word" holding its current token sequence and how often it occurs. A pair's
// count is the sum over words of (occurrences of the pair in the word) x (word count). Merging a pair
// touches only the words that contain it: each such word's pairs are subtracted, the merge is applied
// left to right without overlap (as encoding does), and its new pairs are added back. The best pair is
// kept in a max-heap of (count, pair) entries; an entry whose count no longer matches is stale and
// skipped, and every changed count pushes a fresh entry, so the heap always holds the true maximum.
#include <algorithm>
#include <limits>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer_trainer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"

namespace engine {
namespace {

constexpr int32_t k_byte_tokens = 256;

using PairKey = uint64_t;
PairKey pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}
int32_t pair_left(PairKey k) { return static_cast<int32_t>(k >> 32); }
int32_t pair_right(PairKey k) { return static_cast<int32_t>(k & 0xffffffffu); }

struct HeapEntry {
  uint64_t count;
  PairKey pair;
  // Max-heap on count; among equal counts the smaller pair key (smaller ids) comes first.
  bool operator<(const HeapEntry& o) const { return count != o.count ? count < o.count : pair > o.pair; }
};

struct Word {
  std::vector<int32_t> tokens;  // internal ids: 0..255 bytes, 256 + k the k-th merge
  uint64_t count = 0;
};

}  // namespace

struct BpeTrainer::Impl {
  std::unique_ptr<tokenizer::PreTokenizer> pre;
  std::unordered_map<std::string, uint64_t> piece_counts;
  uint64_t bytes = 0;
};

BpeTrainer::BpeTrainer(BpeTrainingOptions options) : m_options(std::move(options)), m_impl(std::make_unique<Impl>()) {
  m_impl->pre = tokenizer::make_pre_tokenizer_by_gguf_name(m_options.pre_tokenizer);
  if (!m_impl->pre)
    throw Error("tokenizer training: unknown pre-tokenizer '" + m_options.pre_tokenizer +
                "' (supported: qwen2, llama-bpe, gpt-2)");
  std::unordered_set<std::string> seen;
  for (const std::string& s : m_options.special_tokens) {
    if (s.empty()) throw Error("tokenizer training: a special token is empty");
    if (!seen.insert(s).second) throw Error("tokenizer training: special token '" + s + "' is given twice");
  }
  const int64_t minimum = static_cast<int64_t>(m_options.special_tokens.size()) + k_byte_tokens;
  if (m_options.vocab_size < minimum)
    throw Error("tokenizer training: a vocabulary of " + std::to_string(m_options.vocab_size) +
                " is smaller than the special tokens + 256 byte tokens (" + std::to_string(minimum) + ")");
  if (m_options.min_pair_count < 1) m_options.min_pair_count = 1;
}

BpeTrainer::~BpeTrainer() = default;

void BpeTrainer::add_text(std::string_view text) {
  std::vector<std::string_view> pieces;
  auto count_segment = [&](std::string_view segment) {
    if (segment.empty()) return;
    pieces.clear();
    m_impl->pre->split(segment, pieces);
    for (std::string_view p : pieces) ++m_impl->piece_counts[std::string(p)];
    m_impl->bytes += segment.size();
  };
  // Cut out every special token: the earliest occurrence of any of them ends the current segment.
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t best = std::string_view::npos, best_len = 0;
    for (const std::string& s : m_options.special_tokens) {
      const std::size_t at = text.find(s, pos);
      if (at < best || (at == best && s.size() > best_len)) best = at, best_len = s.size();
    }
    if (best == std::string_view::npos) {
      count_segment(text.substr(pos));
      break;
    }
    count_segment(text.substr(pos, best - pos));
    pos = best + best_len;
  }
}

std::unique_ptr<Tokenizer> BpeTrainer::train(BpeTrainingReport* report, const Progress& progress) const {
  if (m_impl->piece_counts.empty()) throw Error("tokenizer training: no text to train on");
  const int32_t n_special = static_cast<int32_t>(m_options.special_tokens.size());
  const int32_t merges_wanted = m_options.vocab_size - n_special - k_byte_tokens;

  // Words in a fixed order (by bytes) so that nothing depends on the hash map's iteration order.
  std::vector<std::pair<std::string, uint64_t>> sorted(m_impl->piece_counts.begin(), m_impl->piece_counts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<Word> words(sorted.size());
  std::unordered_map<PairKey, uint64_t> pair_counts;
  std::unordered_map<PairKey, std::vector<uint32_t>> pair_words;  // may list a word twice or stale: re-checked
  for (std::size_t w = 0; w < sorted.size(); ++w) {
    const std::string& piece = sorted[w].first;
    words[w].count = sorted[w].second;
    words[w].tokens.reserve(piece.size());
    for (unsigned char c : piece) words[w].tokens.push_back(c);
    for (std::size_t i = 0; i + 1 < piece.size(); ++i) {
      const PairKey k = pair_key(words[w].tokens[i], words[w].tokens[i + 1]);
      pair_counts[k] += words[w].count;
      std::vector<uint32_t>& where = pair_words[k];
      if (where.empty() || where.back() != w) where.push_back(static_cast<uint32_t>(w));
    }
  }
  std::priority_queue<HeapEntry> heap;
  for (const auto& [k, c] : pair_counts) heap.push({c, k});

  std::vector<std::string> token_bytes(k_byte_tokens);
  for (int32_t b = 0; b < k_byte_tokens; ++b) token_bytes[b] = std::string(1, static_cast<char>(b));
  std::vector<PairKey> merges;
  uint64_t last_count = 0;
  std::unordered_map<PairKey, int64_t> delta;
  std::vector<int32_t> merged;

  // Two different merges can spell the same bytes ("a"+"bc" and "ab"+"c"): the second then yields the
  // existing token, as Hugging Face's trainer does, so the vocabulary never holds a piece twice.
  std::unordered_map<std::string, int32_t> id_of_bytes;
  for (int32_t b = 0; b < k_byte_tokens; ++b) id_of_bytes.emplace(token_bytes[b], b);

  while (static_cast<int32_t>(token_bytes.size()) - k_byte_tokens < merges_wanted && !heap.empty()) {
    const HeapEntry top = heap.top();
    heap.pop();
    const auto it = pair_counts.find(top.pair);
    if (it == pair_counts.end() || it->second != top.count) continue;  // stale entry
    if (top.count < m_options.min_pair_count) break;
    const int32_t left = pair_left(top.pair), right = pair_right(top.pair);
    std::string bytes = token_bytes[left] + token_bytes[right];
    const auto [found, added] = id_of_bytes.emplace(bytes, static_cast<int32_t>(token_bytes.size()));
    if (added) token_bytes.push_back(std::move(bytes));
    const int32_t new_id = found->second;
    merges.push_back(top.pair);
    last_count = top.count;

    delta.clear();
    std::vector<uint32_t> affected = std::move(pair_words[top.pair]);
    pair_words.erase(top.pair);
    for (const uint32_t w : affected) {
      Word& word = words[w];
      std::vector<int32_t>& t = word.tokens;
      bool contains = false;
      for (std::size_t i = 0; i + 1 < t.size() && !contains; ++i) contains = t[i] == left && t[i + 1] == right;
      if (!contains) continue;  // listed twice, or already merged away
      const int64_t c = static_cast<int64_t>(word.count);
      for (std::size_t i = 0; i + 1 < t.size(); ++i) delta[pair_key(t[i], t[i + 1])] -= c;
      merged.clear();
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (i + 1 < t.size() && t[i] == left && t[i + 1] == right) {
          merged.push_back(new_id);
          ++i;
        } else {
          merged.push_back(t[i]);
        }
      }
      t.swap(merged);
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        const PairKey k = pair_key(t[i], t[i + 1]);
        delta[k] += c;
        if (t[i] == new_id || t[i + 1] == new_id) {
          std::vector<uint32_t>& where = pair_words[k];
          if (where.empty() || where.back() != w) where.push_back(w);
        }
      }
    }
    for (const auto& [k, d] : delta) {
      if (d == 0) continue;
      uint64_t& count = pair_counts[k];
      count = static_cast<uint64_t>(static_cast<int64_t>(count) + d);
      if (count == 0) {
        pair_counts.erase(k);
        pair_words.erase(k);
      } else {
        heap.push({count, k});
      }
    }
    const int32_t learned = static_cast<int32_t>(token_bytes.size()) - k_byte_tokens;
    if (progress && added && learned % 64 == 0) progress(learned, merges_wanted);
  }
  if (progress) progress(static_cast<int32_t>(token_bytes.size()) - k_byte_tokens, merges_wanted);

  // Final ids: specials, then bytes, then merges; internal id i (byte or merge) -> n_special + i.
  std::vector<std::string> vocab;
  std::vector<int32_t> types;
  vocab.reserve(static_cast<std::size_t>(n_special) + token_bytes.size());
  for (const std::string& s : m_options.special_tokens) {
    vocab.push_back(s);
    types.push_back(3);
  }
  for (const std::string& bytes : token_bytes) {
    std::string piece;
    tokenizer::bytes_to_piece(bytes, piece);
    vocab.push_back(std::move(piece));
    types.push_back(1);
  }
  // A special token spelled like a byte or learned token would make two ids for one piece.
  std::unordered_set<std::string_view> learned(vocab.begin() + n_special, vocab.end());
  for (const std::string& s : m_options.special_tokens)
    if (learned.count(s))
      throw Error("tokenizer training: special token '" + s +
                  "' is spelled like a byte or learned token; choose a marker such as <|" + s + "|>");
  std::vector<std::string> merge_lines;
  merge_lines.reserve(merges.size());
  for (const PairKey k : merges)
    merge_lines.push_back(vocab[static_cast<std::size_t>(n_special + pair_left(k))] + " " +
                          vocab[static_cast<std::size_t>(n_special + pair_right(k))]);
  std::optional<int32_t> eos;
  for (int32_t i = 0; i < n_special && !eos; ++i)
    if (m_options.special_tokens[i] == "<|endoftext|>") eos = i;
  if (!eos && n_special > 0) eos = 0;

  if (report) {
    report->bytes = m_impl->bytes;
    report->distinct_pieces = words.size();
    report->merges = static_cast<int32_t>(merges.size());
    report->new_tokens = static_cast<int32_t>(token_bytes.size()) - k_byte_tokens;
    report->last_merge_count = last_count;
    report->tokens_after = 0;
    for (const Word& w : words) report->tokens_after += w.count * w.tokens.size();
  }
  return Tokenizer::from_bpe_vocab(std::move(vocab), merge_lines, m_options.pre_tokenizer, types, std::nullopt, eos);
}

}  // namespace engine
