// Tokenizer::from_spm_vocab: validating a SentencePiece-style vocabulary read from GGUF metadata.
//
// The arrays come straight from a (possibly hostile) model file, so everything the tokenizer relies
// on is checked here and every failure is an engine::Error naming the entry (reliability.md §1.7,
// case 15): equal array lengths, a non-empty vocabulary with int32 ids, known token types, no NaN
// scores (a NaN would break the merge heap's ordering), BYTE tokens spelled exactly "<0xHH>" with two
// hex digits and each byte at most once, and bos / eos / unk ids inside the vocabulary.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "tokenizer/guarded_json.h"
#include "tokenizer/spm_tokenizer.h"

namespace engine {
namespace {

using tokenizer::SpmTokenType;

constexpr const char* k_source = "SPM vocabulary";

[[noreturn]] void fail(const std::string& what) { throw Error(std::string(k_source) + ": " + what); }

std::optional<int32_t> checked_id(std::optional<int32_t> id, const char* name, std::size_t size) {
  if (id && (*id < 0 || static_cast<std::size_t>(*id) >= size))
    fail(std::string(name) + " id " + std::to_string(*id) + " is outside the vocabulary of " + std::to_string(size) +
         " tokens");
  return id;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_spm_vocab(std::vector<std::string> tokens, std::vector<float> scores,
                                                     std::vector<int32_t> token_types, std::optional<int32_t> bos,
                                                     std::optional<int32_t> eos, std::optional<int32_t> unk,
                                                     bool add_space_prefix) {
  const std::size_t n = tokens.size();
  if (n == 0) fail("the vocabulary is empty");
  if (n > static_cast<std::size_t>(std::numeric_limits<int32_t>::max()))
    fail(std::to_string(n) + " tokens do not fit int32 ids");
  if (scores.size() != n) fail(std::to_string(n) + " tokens but " + std::to_string(scores.size()) + " scores");
  if (token_types.size() != n)
    fail(std::to_string(n) + " tokens but " + std::to_string(token_types.size()) + " token types");

  tokenizer::SpmVocab vocab;
  vocab.types.reserve(n);
  std::vector<int64_t> byte_owner(256, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string where = "token " + std::to_string(i) + " " + tokenizer::quote_for_message(tokens[i]);
    if (std::isnan(scores[i])) fail(where + ": score is NaN");
    const int32_t t = token_types[i];
    if (t < static_cast<int32_t>(SpmTokenType::undefined) || t > static_cast<int32_t>(SpmTokenType::byte))
      fail(where + ": token type " + std::to_string(t) + " is not one of 0..6");
    const auto type = static_cast<SpmTokenType>(t);
    if (type == SpmTokenType::byte) {
      const std::optional<uint8_t> b = tokenizer::parse_byte_piece(tokens[i]);
      if (!b) fail(where + ": a BYTE token must be spelled \"<0xHH>\" with two hex digits");
      if (byte_owner[*b] >= 0)
        fail(where + ": byte " + tokens[i] + " already has token " + std::to_string(byte_owner[*b]));
      byte_owner[*b] = static_cast<int64_t>(i);
    }
    vocab.types.push_back(type);
  }
  vocab.bos = checked_id(bos, "bos", n);
  vocab.eos = checked_id(eos, "eos", n);
  vocab.unk = checked_id(unk, "unk", n);
  vocab.add_space_prefix = add_space_prefix;
  vocab.tokens = std::move(tokens);
  vocab.scores = std::move(scores);
  return std::make_unique<tokenizer::SpmTokenizer>(std::move(vocab));
}

}  // namespace engine
