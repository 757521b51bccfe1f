// Tokenizer::from_bpe_vocab: a byte-level BPE tokenizer from GGUF "gpt2" vocabulary metadata
// (tokenizer.ggml.tokens / merges / token_type / pre). The arrays come from a possibly hostile file,
// so every length, id and merge is checked here and every failure is an engine::Error naming the entry.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level_bpe_tokenizer.h"
#include "tokenizer/guarded_json.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocabulary.h"

namespace engine {
namespace {

constexpr const char* k_source = "GGUF BPE vocabulary";

[[noreturn]] void fail(const std::string& what) { throw Error(std::string(k_source) + ": " + what); }

std::unique_ptr<tokenizer::PreTokenizer> pre_tokenizer_for(const std::string& name) {
  if (auto pre = tokenizer::make_pre_tokenizer_by_gguf_name(name)) return pre;
  fail("pre-tokenizer " + tokenizer::quote_for_message(name) +
       " is not supported (supported: gpt-2, llama-bpe, qwen2)");
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_bpe_vocab(std::vector<std::string> tokens,
                                                     const std::vector<std::string>& merges,
                                                     const std::string& pre_tokenizer,
                                                     const std::vector<int32_t>& token_types,
                                                     std::optional<int32_t> bos, std::optional<int32_t> eos) {
  const std::size_t n = tokens.size();
  if (n == 0) fail("the vocabulary is empty");
  if (n >= static_cast<std::size_t>(std::numeric_limits<int32_t>::max()))
    fail(std::to_string(n) + " tokens do not fit int32 ids");
  if (!token_types.empty() && token_types.size() != n)
    fail(std::to_string(n) + " tokens but " + std::to_string(token_types.size()) + " token types");
  auto checked = [&](std::optional<int32_t> id, const char* what) {
    if (id && (*id < 0 || static_cast<std::size_t>(*id) >= n))
      fail(std::string(what) + " id " + std::to_string(*id) + " is outside the vocabulary of " + std::to_string(n) +
           " tokens");
  };
  checked(bos, "bos");
  checked(eos, "eos");
  std::unique_ptr<tokenizer::PreTokenizer> pre = pre_tokenizer_for(pre_tokenizer);

  tokenizer::AddedTokenMatcher added;
  for (std::size_t i = 0; i < n; ++i) {
    const int32_t t = token_types.empty() ? 1 : token_types[i];
    if (t < 0 || t > 6)
      fail("token " + std::to_string(i) + ": token type " + std::to_string(t) + " is not one of 0..6");
    if (t != 3 && t != 4) continue;
    const std::string& content = tokens[i];
    if (content.empty() || content.size() > tokenizer::k_max_added_token_bytes)
      fail("token " + std::to_string(i) + ": a control / user-defined token must be 1.." +
           std::to_string(tokenizer::k_max_added_token_bytes) + " bytes");
    added.add(content, static_cast<int32_t>(i), /*special=*/t == 3);
  }

  std::vector<std::pair<std::string, int64_t>> entries;
  entries.reserve(n);
  for (std::size_t i = 0; i < n; ++i) entries.emplace_back(std::move(tokens[i]), static_cast<int64_t>(i));
  // llama.cpp encodes a Llama-3 ("llama-bpe") pre-token that is itself a vocabulary token as that token,
  // whatever the merges would make of it, as the Llama-3 tokenizer.json's "ignore_merges" says: some
  // such tokens (" Việt") are not reachable by the merges at all.
  tokenizer::BpeOptions options;
  options.ignore_merges = pre->gguf_name() == "llama-bpe";
  tokenizer::BpeModel model(tokenizer::Vocabulary::build(std::move(entries), k_source), options);
  const tokenizer::Vocabulary& vocab = model.vocab();
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    const std::string where = "merge " + std::to_string(i) + " " + tokenizer::quote_for_message(m);
    const std::size_t space = m.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 >= m.size() ||
        m.find(' ', space + 1) != std::string::npos)
      fail(where + ": expected two non-empty parts separated by one space");
    const std::string_view left = std::string_view(m).substr(0, space);
    const std::string_view right = std::string_view(m).substr(space + 1);
    const std::optional<int32_t> l = vocab.find(left);
    const std::optional<int32_t> r = vocab.find(right);
    std::string joined(left);
    joined.append(right);
    const std::optional<int32_t> res = vocab.find(joined);
    if (!l || !r || !res) fail(where + ": a part or the result is not in the vocabulary");
    model.add_merge(*l, *r, *res);
  }
  auto tok = std::make_unique<tokenizer::ByteLevelBpeTokenizer>(std::move(model), std::move(added), std::move(pre),
                                                                tokenizer::ByteLevelOptions{});
  if (bos || eos) tok->set_bos_eos(bos ? bos : tok->bos_id(), eos ? eos : tok->eos_id());
  return tok;
}

}  // namespace engine
