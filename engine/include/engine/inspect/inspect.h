// Looking inside a model on one sequence (a prompt and its response): attention probabilities of
// every layer x head, the logit lens, and the next-token distribution at every position.
//
// One forward pass over the whole sequence from an empty cache, with the Runner's optional captures
// on (they cost nothing in normal generation, where they are off).
//   attention (L, NH, T, T): post-softmax probabilities; row q sums to 1 over keys 0..q and is exactly 0
//       above the diagonal. Grouped-query models report every QUERY head (head h reads key/value head
//       h / (NH/KVH)), so NH heads for every architecture.
//   logit lens (L+1, T, K): the final norm and output head applied to the residual stream after the
//       embeddings (row 0) and after each layer (row l = after layer l-1); row L IS the model's output
//       (the same head_forward call on the same rows). Each entry is a token id and its probability.
//   next_* = lens row L: the top-k next-token probabilities per position (the token inspector's view).
//   token_logprob (T): log p(ids[t] | ids[<t]) under the model; entry 0 is 0 (nothing predicts it).
// Sizes: attention is 4*L*NH*T^2 bytes (GPT-2 124M at T=512: 151 MB), so callers cap T.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace engine {

class Backend;
class Model;

struct InspectOptions {
  int top_k = 5;          // K, clamped to [1, V]
  bool attention = true;  // false: attention stays empty
  bool lens = true;       // false: only the final row (lens_rows == 1)
  // Called between lens layers with the fraction done; returning false stops with engine::Cancelled.
  std::function<bool(float fraction)> progress;
};

struct Inspection {
  int n_layer = 0;  // L
  int n_head = 0;   // NH (query heads)
  int T = 0;
  int top_k = 0;                     // K
  int lens_rows = 0;                 // L+1, or 1 when the lens was not asked for
  std::vector<int32_t> ids;          // (T)
  std::vector<float> attention;      // (L, NH, T, T) or empty
  std::vector<int32_t> lens_ids;     // (lens_rows, T, K)
  std::vector<float> lens_probs;     // (lens_rows, T, K)
  std::vector<float> token_logprob;  // (T)
  // Text of every id that appears in ids or lens_ids (raw token bytes; may be partial UTF-8), so a
  // stored inspection shows its tokens without the model. Sorted by id.
  std::vector<std::pair<int32_t, std::string>> pieces;

  // Probability that query q of (layer, head) gives key k.
  float att(int layer, int head, int q, int k) const {
    return attention[((static_cast<size_t>(layer) * n_head + head) * T + q) * T + k];
  }
  // The (T, T) matrix of one head.
  std::span<const float> head_matrix(int layer, int head) const {
    return std::span<const float>(attention).subspan((static_cast<size_t>(layer) * n_head + head) * T * T,
                                                     static_cast<size_t>(T) * T);
  }
  // Lens entry j (0 = most likely) at lens row `row`, position t.
  int32_t lens_id(int row, int t, int j) const { return lens_ids[(static_cast<size_t>(row) * T + t) * top_k + j]; }
  float lens_prob(int row, int t, int j) const { return lens_probs[(static_cast<size_t>(row) * T + t) * top_k + j]; }
  // Next-token top-k at position t (the last lens row).
  int32_t next_id(int t, int j) const { return lens_id(lens_rows - 1, t, j); }
  float next_prob(int t, int j) const { return lens_prob(lens_rows - 1, t, j); }
  // The text of `id` ("" when unknown).
  const std::string& piece(int32_t id) const;
};

// Runs `ids` (1 <= T <= the model's context length) through the model. Throws engine::Error for an
// empty or too long sequence or an id outside the vocabulary.
Inspection inspect_prompt(const Model& model, Backend& backend, std::span<const int32_t> ids,
                          const InspectOptions& options = {});

// Attention of one layer reduced over its heads, (T, T): the mean (still a distribution per row) or
// the elementwise max (shows any head's strong link).
enum class HeadReduce { Mean, Max };
std::vector<float> reduce_heads(const Inspection& in, int layer, HeadReduce how);

// One head of one layer.
struct HeadRef {
  int layer = 0;
  int head = 0;
  friend bool operator==(const HeadRef&, const HeadRef&) = default;
  friend auto operator<=>(const HeadRef&, const HeadRef&) = default;  // layer first, then head
};
// The same over any set of heads, from any layers (the overlay of heads picked by hand), (T, T).
// Throws engine::Error for an empty set or a head out of range.
std::vector<float> reduce_heads(const Inspection& in, std::span<const HeadRef> heads, HeadReduce how);

}  // namespace engine
