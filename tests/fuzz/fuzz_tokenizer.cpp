// libFuzzer target: tokenizer files, then encoding and decoding text with what loaded.
// Input: one mode byte, then the text to encode up to a NUL, then the vocabulary:
//   mode % 3 == 0: a Hugging Face tokenizer.json
//   mode % 3 == 1: a GPT-2 vocab.json, NUL, merges.txt
//   mode % 3 == 2: a GGUF file whose tokenizer.ggml.* metadata is read as the model loader reads it
// Loading must end in a tokenizer or an engine::Error; a loaded tokenizer must encode any text
// (valid UTF-8 or not, special tokens allowed or not), decode any ids (out-of-range ones included)
// and, for a byte-level vocabulary holding all 256 byte tokens and no normalizer, give back the
// exact text: the losslessness tokenizer.h promises.
#include <cstddef>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/tokenizer.h"
#include "fuzz_common.h"
#include "tokenizer/byte_level.h"

namespace {

using engine::Tokenizer;
using engine::io::GgufFile;

std::optional<int32_t> gguf_token_id(const GgufFile& f, const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  const int64_t id = f.find_value(key)->type() == engine::io::GgufType::INT32 ? f.get_i32(key)
                     : static_cast<int64_t>(std::min<uint64_t>(f.get_uint(key), INT32_MAX));
  if (id < 0 || id >= INT32_MAX) throw engine::Error(key + " out of range");  // as the loader's meta_int
  return static_cast<int32_t>(id);
}

// The GGUF vocabulary as engine/src/io/gguf_model.cpp (load_gguf_tokenizer) turns it into a tokenizer;
// kept in step by hand because that function is internal to the model loader.
std::unique_ptr<Tokenizer> gguf_tokenizer(std::string_view bytes) {
  const auto f = GgufFile::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "fuzz.gguf");
  const std::string& kind = f->get_string("tokenizer.ggml.model");
  std::vector<std::string> tokens = f->get_string_array("tokenizer.ggml.tokens");
  std::vector<int32_t> types;
  if (f->has("tokenizer.ggml.token_type")) types = f->get_i32_array("tokenizer.ggml.token_type");
  const std::optional<int32_t> bos = gguf_token_id(*f, "tokenizer.ggml.bos_token_id");
  const std::optional<int32_t> eos = gguf_token_id(*f, "tokenizer.ggml.eos_token_id");
  if (kind == "gpt2") {
    const std::string pre = f->has("tokenizer.ggml.pre") ? f->get_string("tokenizer.ggml.pre") : "gpt-2";
    return Tokenizer::from_bpe_vocab(std::move(tokens), f->get_string_array("tokenizer.ggml.merges"), pre, types, bos,
                                     eos);
  }
  if (kind == "llama") {
    std::vector<float> scores = f->get_f32_array("tokenizer.ggml.scores");
    if (types.empty()) throw engine::Error("tokenizer.ggml.token_type is missing");
    const bool add_space =
        f->has("tokenizer.ggml.add_space_prefix") ? f->get_bool("tokenizer.ggml.add_space_prefix") : true;
    return Tokenizer::from_spm_vocab(std::move(tokens), std::move(scores), std::move(types), bos, eos,
                                     gguf_token_id(*f, "tokenizer.ggml.unknown_token_id"), add_space);
  }
  return nullptr;
}

bool has_every_byte_token(const Tokenizer& tok) {
  for (int b = 0; b < 256; ++b)
    if (!tok.token_id(engine::tokenizer::byte_to_piece_char(static_cast<uint8_t>(b)))) return false;
  return true;
}

volatile uint64_t g_sink = 0;

void exercise(const Tokenizer& tok, std::string_view text) {
  const int32_t V = tok.vocab_size();
  const std::vector<int32_t> plain = tok.encode(text, false);
  for (int32_t id : plain)
    if (id < 0 || id >= V) __builtin_trap();
  const std::string back = tok.decode(plain);
  const engine::TokenizerVocabExport vocab = tok.export_vocab();
  if (vocab.kind == engine::TokenizerVocabExport::Kind::ByteLevelBpe && !vocab.nfc && !vocab.add_prefix_space &&
      has_every_byte_token(tok) && back != text)
    __builtin_trap();  // byte-level BPE must be lossless

  const std::vector<int32_t> special = tok.encode(text, true);
  g_sink = g_sink + tok.decode(special).size();

  // Markup ranges cut from the text itself: the first half is markup, the rest content.
  const engine::TextRange range{0, text.size() / 2};
  std::vector<size_t> offsets;
  const std::vector<int32_t> marked = tok.encode_with_markup(text, std::span(&range, 1), &offsets);
  if (offsets.size() != marked.size()) __builtin_trap();
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] > text.size() || (i > 0 && offsets[i] < offsets[i - 1])) __builtin_trap();

  // Ids from the text's bytes, most of them out of range for a small vocabulary.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 4 <= text.size() && ids.size() < 64; i += 4) {
    int32_t id;
    std::memcpy(&id, text.data() + i, 4);
    ids.push_back(id);
  }
  g_sink = g_sink + tok.decode(ids).size();
  for (int32_t id : ids) g_sink = g_sink + tok.token_bytes(id).size() + tok.token_piece(id).size();
  g_sink = g_sink + tok.token_id(text).value_or(0) + tok.bos_id().value_or(0) + tok.eos_id().value_or(0);
  g_sink = g_sink + vocab.pieces.size() + vocab.merges.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 3;
  const std::string_view rest = wb_fuzz::as_text(data + 1, size - 1);
  std::unique_ptr<Tokenizer> tok;
  std::string_view text;
  try {
    if (mode == 0) {
      const auto parts = wb_fuzz::split_parts(rest, 2);
      text = parts[0];
      tok = Tokenizer::from_tokenizer_json_string(parts[1]);
    } else if (mode == 1) {
      const auto parts = wb_fuzz::split_parts(rest, 3);
      text = parts[0];
      tok = Tokenizer::from_gpt2_strings(parts[1], parts[2]);
    } else {
      const auto parts = wb_fuzz::split_parts(rest, 2);
      text = parts[0];
      tok = gguf_tokenizer(parts[1]);
    }
  } catch (const engine::Error&) {
    return 0;
  }
  if (!tok) return 0;
  exercise(*tok, text);  // a loaded tokenizer must not throw on any text under 1 GiB
  return 0;
}
