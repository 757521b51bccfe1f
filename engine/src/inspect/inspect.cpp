// inspect_prompt / reduce_heads (see engine/inspect/inspect.h).
//
// The lens turns (L+1)*T residual rows into V logits each; they are processed in chunks of rows so the
// logits buffer stays (chunk, V) however long the sequence and however large the vocabulary.
#include "engine/inspect/inspect.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/error.h"
#include "engine/inspect/top_k.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/model_loader.h"

namespace engine {

namespace {

constexpr int kLensChunk = 64;  // rows of logits in flight: 64 * V floats (32 MB at V = 128k)

// Top-k ids and probabilities of each of `rows` logit rows (rows, V) into ids/probs (rows, K).
void rank_rows(const float* logits, int rows, int V, int K, int32_t* ids, float* probs) {
  for (int r = 0; r < rows; ++r) {
    const std::span<const float> row(logits + static_cast<size_t>(r) * V, static_cast<size_t>(V));
    const double lse = log_sum_exp(row);
    const std::vector<int32_t> top = top_k_indices(row, K);
    for (int j = 0; j < K; ++j) {
      const float l = row[top[j]];
      ids[static_cast<size_t>(r) * K + j] = top[j];
      probs[static_cast<size_t>(r) * K + j] =
          std::isfinite(lse) && !std::isnan(l) ? static_cast<float>(std::exp(static_cast<double>(l) - lse)) : 0.0f;
    }
  }
}

}  // namespace

const std::string& Inspection::piece(int32_t id) const {
  static const std::string empty;
  auto it = std::lower_bound(pieces.begin(), pieces.end(), id, [](const auto& p, int32_t v) { return p.first < v; });
  return it != pieces.end() && it->first == id ? it->second : empty;
}

Inspection inspect_prompt(const Model& model, Backend& backend, std::span<const int32_t> ids,
                          const InspectOptions& options) {
  const ModelConfig& c = model.config();
  const int T = static_cast<int>(ids.size());
  if (ids.empty()) throw Error("inspect: no tokens");
  if (ids.size() > static_cast<size_t>(c.max_seq_len))
    throw Error("inspect: " + std::to_string(ids.size()) + " tokens exceed the model's context of " +
                std::to_string(c.max_seq_len));
  const int L = c.n_layer, V = c.vocab_size, C = c.n_embd;
  const int K = std::clamp(options.top_k, 1, V);

  Inspection in;
  in.n_layer = L;
  in.n_head = c.n_head;
  in.T = T;
  in.top_k = K;
  in.lens_rows = options.lens ? L + 1 : 1;
  in.ids.assign(ids.begin(), ids.end());

  Runner runner(model, backend);
  KVCache cache(c, T);
  ForwardOptions fo;
  fo.all_logits = true;
  fo.capture_attention = options.attention;
  fo.capture_residual = options.lens;
  const std::span<const float> logits = runner.forward(ids, cache, fo);  // validates the ids
  if (options.attention) in.attention = runner.attention();              // (L, NH, T, 0+T): the cache was empty

  in.lens_ids.resize(static_cast<size_t>(in.lens_rows) * T * K);
  in.lens_probs.resize(in.lens_ids.size());
  const size_t final_row = static_cast<size_t>(in.lens_rows - 1) * T * K;

  // The model's own output: the last lens row, and the probability of each actual next token.
  rank_rows(logits.data(), T, V, K, in.lens_ids.data() + final_row, in.lens_probs.data() + final_row);
  in.token_logprob.assign(static_cast<size_t>(T), 0.0f);
  for (int t = 1; t < T; ++t) {
    const std::span<const float> row = logits.subspan(static_cast<size_t>(t - 1) * V, static_cast<size_t>(V));
    in.token_logprob[static_cast<size_t>(t)] = static_cast<float>(row[ids[t]] - log_sum_exp(row));
  }

  if (options.lens) {
    const std::vector<float>& stream = runner.residual_stream();  // (L+1, T, C)
    std::vector<float> chunk_logits;
    for (int layer = 0; layer < L; ++layer) {  // row L is the output above (the same head on the same rows)
      for (int t0 = 0; t0 < T; t0 += kLensChunk) {
        const int rows = std::min(kLensChunk, T - t0);
        chunk_logits.resize(static_cast<size_t>(rows) * V);
        runner.head_forward(chunk_logits.data(), stream.data() + (static_cast<size_t>(layer) * T + t0) * C, rows);
        const size_t at = (static_cast<size_t>(layer) * T + t0) * K;
        rank_rows(chunk_logits.data(), rows, V, K, in.lens_ids.data() + at, in.lens_probs.data() + at);
      }
      if (options.progress && !options.progress(static_cast<float>(layer + 1) / static_cast<float>(L)))
        throw Cancelled();
    }
  }

  const Tokenizer* tok = model.tokenizer();
  std::map<int32_t, std::string> pieces;
  for (int32_t id : in.ids) pieces.emplace(id, std::string());
  for (int32_t id : in.lens_ids) pieces.emplace(id, std::string());
  for (auto& [id, text] : pieces)
    if (tok) text = tok->token_bytes(id);
  in.pieces.assign(pieces.begin(), pieces.end());
  return in;
}

std::vector<float> reduce_heads(const Inspection& in, int layer, HeadReduce how) {
  if (in.attention.empty()) throw Error("reduce_heads: the inspection has no attention");
  if (layer < 0 || layer >= in.n_layer) throw Error("reduce_heads: layer " + std::to_string(layer) + " out of range");
  std::vector<HeadRef> heads;
  for (int h = 0; h < in.n_head; ++h) heads.push_back({layer, h});
  return reduce_heads(in, heads, how);
}

std::vector<float> reduce_heads(const Inspection& in, std::span<const HeadRef> heads, HeadReduce how) {
  if (in.attention.empty()) throw Error("reduce_heads: the inspection has no attention");
  if (heads.empty()) throw Error("reduce_heads: no heads to reduce");
  for (const HeadRef& r : heads)
    if (r.layer < 0 || r.layer >= in.n_layer || r.head < 0 || r.head >= in.n_head)
      throw Error("reduce_heads: layer " + std::to_string(r.layer) + " head " + std::to_string(r.head) +
                  " out of range");
  const size_t TT = static_cast<size_t>(in.T) * in.T;
  std::vector<float> out(TT, 0.0f);
  for (const HeadRef& r : heads) {
    const std::span<const float> m = in.head_matrix(r.layer, r.head);
    if (how == HeadReduce::Max)
      for (size_t i = 0; i < TT; ++i) out[i] = std::max(out[i], m[i]);
    else
      for (size_t i = 0; i < TT; ++i) out[i] += m[i];
  }
  if (how == HeadReduce::Mean)
    for (float& v : out) v /= static_cast<float>(heads.size());
  return out;
}

}  // namespace engine
