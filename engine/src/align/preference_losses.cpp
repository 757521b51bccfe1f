// Bradley-Terry and DPO losses and their gradients: see engine/align/preference_losses.h.
#include "engine/align/preference_losses.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"

namespace engine {

namespace {

void check_pairs(const char* what, size_t a, size_t b) {
  if (a != b) throw Error(std::string(what) + ": chosen and rejected differ in length");
  if (a == 0) throw Error(std::string(what) + ": no pairs");
}

}  // namespace

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

BradleyTerryResult bradley_terry_loss(std::span<const float> r_chosen, std::span<const float> r_rejected) {
  check_pairs("Bradley-Terry loss", r_chosen.size(), r_rejected.size());
  const size_t n = r_chosen.size();
  BradleyTerryResult r;
  r.d_chosen.resize(n);
  r.d_rejected.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double d = double(r_chosen[i]) - double(r_rejected[i]);
    r.loss += softplus(-d);
    r.accuracy += d > 0 ? 1.0 : 0.0;
    r.margin += d;
    const double g = sigmoid(-d) / double(n);
    r.d_chosen[i] = static_cast<float>(-g);
    r.d_rejected[i] = static_cast<float>(g);
  }
  r.loss /= double(n);
  r.accuracy /= double(n);
  r.margin /= double(n);
  return r;
}

DpoResult dpo_loss(std::span<const float> logp_chosen, std::span<const float> logp_rejected,
                   std::span<const float> ref_chosen, std::span<const float> ref_rejected, double beta) {
  check_pairs("DPO loss", logp_chosen.size(), logp_rejected.size());
  check_pairs("DPO loss", logp_chosen.size(), ref_chosen.size());
  check_pairs("DPO loss", logp_chosen.size(), ref_rejected.size());
  if (!(beta > 0) || !std::isfinite(beta)) throw Error("DPO loss: beta must be > 0");
  const size_t n = logp_chosen.size();
  DpoResult r;
  r.d_chosen.resize(n);
  r.d_rejected.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double rc = beta * (double(logp_chosen[i]) - double(ref_chosen[i]));
    const double rr = beta * (double(logp_rejected[i]) - double(ref_rejected[i]));
    const double z = rc - rr;
    r.loss += softplus(-z);
    r.rewards_chosen += rc;
    r.rewards_rejected += rr;
    r.margins += z;
    r.accuracies += rc > rr ? 1.0 : 0.0;
    r.logps_chosen += logp_chosen[i];
    r.logps_rejected += logp_rejected[i];
    const double g = beta * sigmoid(-z) / double(n);
    r.d_chosen[i] = static_cast<float>(-g);
    r.d_rejected[i] = static_cast<float>(g);
  }
  for (double* v :
       {&r.loss, &r.rewards_chosen, &r.rewards_rejected, &r.margins, &r.accuracies, &r.logps_chosen, &r.logps_rejected})
    *v /= double(n);
  return r;
}

std::vector<float> sequence_logprobs(std::span<const float> token_logprobs, int B, int T) {
  if (B < 0 || T < 0 || token_logprobs.size() != size_t(B) * size_t(T))
    throw Error("sequence_logprobs: " + std::to_string(token_logprobs.size()) +
                " values are not B*T = " + std::to_string(B) + "*" + std::to_string(T));
  std::vector<float> out(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    double s = 0;
    for (int t = 0; t < T; ++t) s += token_logprobs[size_t(b) * size_t(T) + size_t(t)];
    out[size_t(b)] = static_cast<float>(s);
  }
  return out;
}

}  // namespace engine
