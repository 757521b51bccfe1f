// Encode/decode of the SentencePiece-style BPE tokenizer (see spm_tokenizer.h).
#include "tokenizer/spm_tokenizer.h"

#include <queue>
#include <string>

#include "engine/error.h"
#include "tokenizer/byte_level_bpe_tokenizer.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

constexpr std::string_view k_space_marker = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string piece_to_text(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.substr(i, k_space_marker.size()) == k_space_marker) {
      out += ' ';
      i += k_space_marker.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

// One symbol of the text being merged: bytes [start, start + length) of the segment, in a doubly
// linked list; length 0 marks a symbol merged into its left neighbour.
struct Symbol {
  int32_t prev;
  int32_t next;
  std::size_t start;
  std::size_t length;
};

struct Candidate {
  float score;
  int32_t left;
  int32_t right;
  std::size_t length;  // left.length + right.length when pushed; a mismatch later means stale
};

// Max-heap order: higher score first, then the leftmost pair.
struct CandidateLess {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.score != b.score) return a.score < b.score;
    return a.left > b.left;
  }
};

}  // namespace

std::optional<uint8_t> parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return std::nullopt;
  const int hi = hex_value(piece[3]);
  const int lo = hex_value(piece[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<uint8_t>(hi * 16 + lo);
}

SpmTokenizer::SpmTokenizer(SpmVocab vocab) : m_vocab(std::move(vocab)) {
  m_byte_ids.fill(-1);
  const std::size_t n = m_vocab.tokens.size();
  m_bytes.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<int32_t>(i);
    const std::string& piece = m_vocab.tokens[i];
    const SpmTokenType type = m_vocab.types[i];
    m_all.emplace(piece, id);  // keeps the first id of a repeated piece
    if (type == SpmTokenType::byte) {
      const uint8_t b = *parse_byte_piece(piece);  // validated by the loader
      m_byte_ids[b] = id;
      m_bytes[i] = std::string(1, static_cast<char>(b));
      continue;
    }
    m_bytes[i] = piece_to_text(piece);
    if (type == SpmTokenType::normal || type == SpmTokenType::user_defined || type == SpmTokenType::undefined)
      m_mergeable.emplace(piece, id);
    // Control and unknown tokens are markup the caller may insert (allow_special); user-defined ones
    // are atomic text, matched always (llama.cpp's behaviour). Ones longer than the matcher's bound
    // cannot be matched in text, which no real vocabulary needs.
    const bool special = type == SpmTokenType::control || type == SpmTokenType::unknown;
    if ((special || type == SpmTokenType::user_defined) && !piece.empty() && piece.size() <= k_max_added_token_bytes)
      m_added_tokens.add(piece, id, special);
  }
}

template <typename Find>
std::vector<int32_t> SpmTokenizer::encode_split(std::string_view text, Find find,
                                                std::vector<std::size_t>* offsets) const {
  if (text.size() > k_max_encode_bytes)
    throw Error("tokenizer: input of " + std::to_string(text.size()) + " bytes is larger than the " +
                std::to_string(k_max_encode_bytes >> 20) + " MiB limit");
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 16);
  if (offsets) offsets->clear();
  std::size_t pos = 0;
  bool after_token = true;  // llama.cpp prefixes the text start and every segment after a cut-out token
  for (;;) {
    const std::optional<AddedTokenMatcher::Match> m = find(text, pos);
    const std::size_t segment_end = m ? m->pos : text.size();
    if (segment_end > pos) {
      encode_segment(text.substr(pos, segment_end - pos), after_token && m_vocab.add_space_prefix, pos, ids, offsets);
      after_token = false;
    }
    if (!m) break;
    ids.push_back(m->id);
    if (offsets) offsets->push_back(m->pos);
    after_token = true;
    pos = m->pos + m->length;
  }
  return ids;
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool allow_special) const {
  return encode_split(
      text, [&](std::string_view t, std::size_t from) { return m_added_tokens.find(t, from, allow_special); }, nullptr);
}

std::vector<int32_t> SpmTokenizer::encode_with_markup(std::string_view text, std::span<const TextRange> special_ranges,
                                                      std::vector<std::size_t>* offsets) const {
  return encode_split(
      text, [&](std::string_view t, std::size_t from) { return m_added_tokens.find_in(t, from, special_ranges); },
      offsets);
}

void SpmTokenizer::encode_segment(std::string_view segment, bool prefix_space, std::size_t at,
                                  std::vector<int32_t>& out, std::vector<std::size_t>* offsets) const {
  std::string s;
  s.reserve(segment.size() + segment.size() / 2 + 3);
  // source[i]: the segment offset byte i of `s` came from (only kept when offsets are wanted).
  std::vector<std::size_t> source;
  auto note = [&](std::size_t from, std::size_t count) {
    if (offsets) source.insert(source.end(), count, from);
  };
  if (prefix_space) {
    s += k_space_marker;
    note(0, k_space_marker.size());
  }
  for (std::size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] == ' ') {
      s += k_space_marker;
      note(i, k_space_marker.size());
    } else {
      s += segment[i];
      note(i, 1);
    }
  }

  std::vector<Symbol> symbols;
  symbols.reserve(s.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = decode_utf8(bytes + i, s.size() - i).length;
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, index + 1, i, len});
    i += len;
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<Candidate, std::vector<Candidate>, CandidateLess> heap;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<std::size_t>(left)];
    const Symbol& r = symbols[static_cast<std::size_t>(right)];
    const std::string_view joined(s.data() + l.start, l.length + r.length);
    auto it = m_mergeable.find(joined);
    if (it == m_mergeable.end()) return;
    heap.push({m_vocab.scores[static_cast<std::size_t>(it->second)], left, right, joined.size()});
  };
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) try_add(static_cast<int32_t>(i), static_cast<int32_t>(i + 1));

  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& l = symbols[static_cast<std::size_t>(c.left)];
    Symbol& r = symbols[static_cast<std::size_t>(c.right)];
    if (l.length == 0 || r.length == 0 || l.length + r.length != c.length) continue;  // stale
    l.length += r.length;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<std::size_t>(r.next)].prev = c.left;
    try_add(l.prev, c.left);
    try_add(c.left, l.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
    const Symbol& sym = symbols[static_cast<std::size_t>(i)];
    const std::size_t first = out.size();
    emit_symbol(std::string_view(s.data() + sym.start, sym.length), out);
    if (!offsets) continue;
    // A symbol spelled as byte tokens gives one id per byte; each starts at its own byte.
    const bool per_byte = out.size() - first == sym.length;
    for (std::size_t k = first; k < out.size(); ++k)
      offsets->push_back(at + source[sym.start + (per_byte ? k - first : 0)]);
  }
}

void SpmTokenizer::emit_symbol(std::string_view piece, std::vector<int32_t>& out) const {
  if (auto it = m_mergeable.find(piece); it != m_mergeable.end()) {
    out.push_back(it->second);
    return;
  }
  bool all_bytes = true;
  for (unsigned char b : piece) all_bytes = all_bytes && m_byte_ids[b] >= 0;
  if (all_bytes) {
    for (unsigned char b : piece) out.push_back(m_byte_ids[b]);
  } else if (m_vocab.unk) {
    out.push_back(*m_vocab.unk);
  }
  // else: no way to spell it; dropped, as HF's BPE does without an unknown token
}

std::string SpmTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id >= 0 && id < vocab_size()) out += m_bytes[static_cast<std::size_t>(id)];
  }
  return out;
}

std::string SpmTokenizer::token_bytes(int32_t id) const {
  return (id >= 0 && id < vocab_size()) ? m_bytes[static_cast<std::size_t>(id)] : std::string();
}

std::string SpmTokenizer::token_piece(int32_t id) const {
  return (id >= 0 && id < vocab_size()) ? m_vocab.tokens[static_cast<std::size_t>(id)] : std::string();
}

std::optional<int32_t> SpmTokenizer::token_id(std::string_view piece) const {
  auto it = m_all.find(piece);
  if (it == m_all.end()) return std::nullopt;
  return it->second;
}

TokenizerVocabExport SpmTokenizer::export_vocab() const {
  TokenizerVocabExport e;
  e.kind = TokenizerVocabExport::Kind::SentencePiece;
  e.pieces = m_vocab.tokens;
  e.scores = m_vocab.scores;
  e.token_types.reserve(m_vocab.types.size());
  for (SpmTokenType t : m_vocab.types) e.token_types.push_back(static_cast<int32_t>(t));
  e.add_space_prefix = m_vocab.add_space_prefix;
  e.bos = m_vocab.bos;
  e.eos = m_vocab.eos;
  e.unk = m_vocab.unk;
  return e;
}

}  // namespace engine::tokenizer
