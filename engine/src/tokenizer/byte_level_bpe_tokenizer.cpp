// Encode/decode glue of the byte-level BPE tokenizer (see byte_level_bpe_tokenizer.h).
#include "tokenizer/byte_level_bpe_tokenizer.h"

#include <algorithm>
#include <string>

#include "engine/error.h"
#include "tokenizer/nfc.h"

namespace engine::tokenizer {

ByteLevelBpeTokenizer::ByteLevelBpeTokenizer(BpeModel model, AddedTokenMatcher added_tokens,
                                             std::unique_ptr<PreTokenizer> pre_tokenizer, ByteLevelOptions options)
    : m_model(std::move(model)),
      m_added_tokens(std::move(added_tokens)),
      m_pre_tokenizer(std::move(pre_tokenizer)),
      m_options(options) {
  // GPT-2 (and Qwen2) use <|endoftext|> both to start and to end a document. Llama-3 has its own
  // pair; tokenizer.json does not say which tokens are BOS / EOS, so the family's names are looked up.
  if (std::optional<int32_t> eot = m_model.vocab().find("<|endoftext|>")) {
    m_bos_id = eot;
    m_eos_id = eot;
  }
  if (std::optional<int32_t> bot = m_model.vocab().find("<|begin_of_text|>")) m_bos_id = bot;
  if (std::optional<int32_t> eot = m_model.vocab().find("<|end_of_text|>")) m_eos_id = eot;
}

template <typename Find>
std::vector<int32_t> ByteLevelBpeTokenizer::encode_split(std::string_view text, Find find,
                                                         std::vector<std::size_t>* offsets) const {
  if (text.size() > k_max_encode_bytes)
    throw Error("tokenizer: input of " + std::to_string(text.size()) + " bytes is larger than the " +
                std::to_string(k_max_encode_bytes >> 20) + " MiB limit");
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 4 + 16);  // English averages ~4 bytes per token
  if (offsets) offsets->clear();
  std::size_t pos = 0;
  for (;;) {
    const std::optional<AddedTokenMatcher::Match> m = find(text, pos);
    const std::size_t segment_end = m ? m->pos : text.size();
    encode_segment(text.substr(pos, segment_end - pos), pos, ids, offsets);
    if (!m) break;
    ids.push_back(m->id);
    if (offsets) offsets->push_back(m->pos);
    pos = m->pos + m->length;
  }
  return ids;
}

std::vector<int32_t> ByteLevelBpeTokenizer::encode(std::string_view text, bool allow_special) const {
  return encode_split(
      text, [&](std::string_view t, std::size_t from) { return m_added_tokens.find(t, from, allow_special); }, nullptr);
}

std::vector<int32_t> ByteLevelBpeTokenizer::encode_with_markup(std::string_view text,
                                                               std::span<const TextRange> special_ranges,
                                                               std::vector<std::size_t>* offsets) const {
  return encode_split(
      text, [&](std::string_view t, std::size_t from) { return m_added_tokens.find_in(t, from, special_ranges); },
      offsets);
}

void ByteLevelBpeTokenizer::encode_segment(std::string_view segment, std::size_t at, std::vector<int32_t>& out,
                                           std::vector<std::size_t>* offsets) const {
  if (segment.empty()) return;
  // NFC (Qwen2): the pieces are cut from the normalized text; `normalized_source` maps its bytes back.
  const std::size_t raw_size = segment.size();
  std::string normalized;
  std::vector<std::size_t> normalized_source;
  if (m_options.nfc) {
    normalized = nfc(segment, offsets ? &normalized_source : nullptr);
    segment = normalized;
  }
  std::string prefixed;
  std::size_t shift = 0;  // bytes added in front of the segment
  if (m_options.add_prefix_space && segment.front() != ' ') {
    prefixed.reserve(segment.size() + 1);
    prefixed += ' ';
    prefixed += segment;
    segment = prefixed;
    shift = 1;
  }
  std::vector<std::string_view> words;
  m_pre_tokenizer->split(segment, words);
  for (std::string_view w : words) {
    const std::size_t first = out.size();
    m_model.encode_word(w, out);
    if (!offsets) continue;
    // A byte-level token spells its bytes exactly, so each one begins where the previous one ended.
    std::size_t o = static_cast<std::size_t>(w.data() - segment.data());
    const std::size_t word_end = o + w.size();
    for (std::size_t k = first; k < out.size(); ++k) {
      std::size_t in_segment = o > shift ? o - shift : 0;
      if (m_options.nfc) in_segment = in_segment < normalized_source.size() ? normalized_source[in_segment] : raw_size;
      // Reordered combining marks can map back out of order; offsets stay non-decreasing.
      const std::size_t offset = at + in_segment;
      offsets->push_back(offsets->empty() ? offset : std::max(offsets->back(), offset));
      o = std::min(word_end, o + m_model.vocab().bytes(out[k]).size());
    }
  }
}

std::string ByteLevelBpeTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (m_model.vocab().contains_id(id)) out += m_model.vocab().bytes(id);
  }
  return out;
}

std::string ByteLevelBpeTokenizer::token_bytes(int32_t id) const {
  return m_model.vocab().contains_id(id) ? m_model.vocab().bytes(id) : std::string();
}

std::string ByteLevelBpeTokenizer::token_piece(int32_t id) const {
  return m_model.vocab().contains_id(id) ? m_model.vocab().piece(id) : std::string();
}

int32_t ByteLevelBpeTokenizer::vocab_size() const { return m_model.vocab().size(); }

std::optional<int32_t> ByteLevelBpeTokenizer::token_id(std::string_view piece) const {
  return m_model.vocab().find(piece);
}

TokenizerVocabExport ByteLevelBpeTokenizer::export_vocab() const {
  TokenizerVocabExport e;
  e.kind = TokenizerVocabExport::Kind::ByteLevelBpe;
  const Vocabulary& v = m_model.vocab();
  e.pieces.resize(static_cast<std::size_t>(v.size()));
  e.token_types.assign(e.pieces.size(), 1);
  for (int32_t id = 0; id < v.size(); ++id) {
    if (v.contains_id(id)) e.pieces[static_cast<std::size_t>(id)] = v.piece(id);
    else e.token_types[static_cast<std::size_t>(id)] = 5;  // a gap in the ids: no token, "unused"
  }
  for (const auto& [id, special] : m_added_tokens.tokens())
    if (id >= 0 && id < v.size()) e.token_types[static_cast<std::size_t>(id)] = special ? 3 : 4;
  const auto merges = m_model.merges_by_rank();
  e.merges.reserve(merges.size());
  for (const auto& [l, r] : merges) e.merges.push_back(v.piece(l) + " " + v.piece(r));
  e.pre_tokenizer = std::string(m_pre_tokenizer->gguf_name());
  e.add_prefix_space = m_options.add_prefix_space;
  e.nfc = m_options.nfc;
  e.bos = m_bos_id;
  e.eos = m_eos_id;
  return e;
}

}  // namespace engine::tokenizer
