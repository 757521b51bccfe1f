// The k most likely tokens of one distribution: shared by generation (top_logprobs), the logit lens
// and the token inspector, so every view ranks alternatives the same way.
//
// Order: larger value first; equal values by smaller id (deterministic across runs and backends).
// NaN counts as -inf, like the sampler. k is clamped to [0, n].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace engine {

// Ids of the min(k, values.size()) largest entries of `values`, largest first.
std::vector<int32_t> top_k_indices(std::span<const float> values, int k);

// log(sum(exp(logits))) accumulated in double (V ~ 150k loses digits in float); NaN logits are skipped.
// -inf when no logit is finite or +inf.
double log_sum_exp(std::span<const float> logits);

}  // namespace engine
