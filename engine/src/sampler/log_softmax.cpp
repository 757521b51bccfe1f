// log_softmax: out[i] = logit[i] - logsumexp(logits), accumulated in double (reported logprobs
// must stay accurate for V ~ 150k, where a float sum of exps loses several digits).
//
// Conventions that keep the output free of NaN: NaN logits count as -inf (as in the sampler);
// -inf logits give -inf; if every logit is -inf every output is -inf (no token is possible); if
// some logits are +inf they share the mass (each -log(count)) and the others get -inf.
#include "sampler_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine {

void log_softmax(std::span<const float> logits, std::vector<float>& out) {
  const size_t n = logits.size();
  out.resize(n);
  if (n == 0) return;
  constexpr double inf = std::numeric_limits<double>::infinity();

  double m = -inf;
  for (const float l : logits) {
    if (!std::isnan(l)) m = std::max(m, static_cast<double>(l));
  }
  if (m == -inf) {
    std::fill(out.begin(), out.end(), -std::numeric_limits<float>::infinity());
    return;
  }
  if (m == inf) {
    size_t count = 0;
    for (const float l : logits) count += (static_cast<double>(l) == inf) ? 1 : 0;
    const float share = static_cast<float>(-std::log(static_cast<double>(count)));
    for (size_t i = 0; i < n; ++i) {
      out[i] = static_cast<double>(logits[i]) == inf ? share : -std::numeric_limits<float>::infinity();
    }
    return;
  }

  // Subtracting the max keeps every exp in (0, 1], so the sum cannot overflow and is >= 1.
  double sum = 0.0;
  for (const float l : logits) {
    if (!std::isnan(l)) sum += std::exp(static_cast<double>(l) - m);
  }
  const double lse = m + std::log(sum);
  for (size_t i = 0; i < n; ++i) {
    const float l = logits[i];
    out[i] = std::isnan(l) ? -std::numeric_limits<float>::infinity() : static_cast<float>(static_cast<double>(l) - lse);
  }
}

}  // namespace engine
