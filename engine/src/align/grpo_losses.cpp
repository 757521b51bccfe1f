// GRPO's advantages, KL estimator and clipped objective: see engine/align/grpo_losses.h.
#include "engine/align/grpo_losses.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"

namespace engine {

namespace {

void check_groups(size_t n, int group_size) {
  if (group_size < 2)
    throw Error("GRPO: a group needs at least 2 completions (got " + std::to_string(group_size) + ")");
  if (n % size_t(group_size) != 0)
    throw Error("GRPO: " + std::to_string(n) + " rewards are not groups of " + std::to_string(group_size));
}

struct GroupStats {
  double mean = 0, std = 0;
};

GroupStats group_stats(std::span<const float> r) {
  GroupStats s;
  for (float x : r) s.mean += x;
  s.mean /= double(r.size());
  double ss = 0;
  for (float x : r) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / double(r.size() - 1));
  return s;
}

}  // namespace

std::vector<float> group_advantages(std::span<const float> rewards, int group_size, double eps) {
  check_groups(rewards.size(), group_size);
  std::vector<float> out(rewards.size());
  for (size_t g = 0; g < rewards.size(); g += size_t(group_size)) {
    const std::span<const float> r = rewards.subspan(g, size_t(group_size));
    const GroupStats s = group_stats(r);
    for (size_t i = 0; i < r.size(); ++i) out[g + i] = static_cast<float>((r[i] - s.mean) / (s.std + eps));
  }
  return out;
}

std::vector<float> group_reward_std(std::span<const float> rewards, int group_size) {
  check_groups(rewards.size(), group_size);
  std::vector<float> out;
  for (size_t g = 0; g < rewards.size(); g += size_t(group_size))
    out.push_back(static_cast<float>(group_stats(rewards.subspan(g, size_t(group_size))).std));
  return out;
}

GrpoLossType grpo_loss_type_from_name(const std::string& name) {
  if (name == "grpo") return GrpoLossType::Grpo;
  if (name == "bnpo") return GrpoLossType::Bnpo;
  throw Error("GRPO: unknown loss type '" + name + "' (grpo: mean per completion, bnpo: mean per token)");
}

const char* grpo_loss_type_name(GrpoLossType t) { return t == GrpoLossType::Bnpo ? "bnpo" : "grpo"; }

double k3_kl(double ref_logp, double logp) {
  const double d = ref_logp - logp;
  // expm1 keeps the value exact (and >= 0) when the two log-probs are close.
  return std::max(0.0, std::expm1(d) - d);
}

double k3_kl_grad(double ref_logp, double logp) { return -std::expm1(ref_logp - logp); }

GrpoLossResult grpo_loss(std::span<const float> logp, std::span<const float> old_logp, std::span<const float> ref_logp,
                         std::span<const uint8_t> mask, std::span<const float> advantages, int B, int T, double clip,
                         double beta, GrpoLossType type) {
  const size_t N = size_t(B) * size_t(T);
  if (B < 1 || T < 1 || logp.size() != N || old_logp.size() != N || ref_logp.size() != N || mask.size() != N ||
      advantages.size() != size_t(B))
    throw Error("GRPO loss: the log-probs, mask and advantages do not match B = " + std::to_string(B) +
                ", T = " + std::to_string(T));
  if (!(clip >= 0) || !(beta >= 0)) throw Error("GRPO loss: clip and beta must be >= 0");
  GrpoLossResult out;
  out.dlogp.assign(N, 0.0f);
  int64_t batch_tokens = 0;
  for (size_t i = 0; i < N; ++i) batch_tokens += mask[i] ? 1 : 0;
  double kl_sum = 0, clipped = 0;
  for (int b = 0; b < B; ++b) {
    const size_t row = size_t(b) * size_t(T);
    int n = 0;
    for (int t = 0; t < T; ++t) n += mask[row + size_t(t)] ? 1 : 0;
    if (n == 0) continue;  // counts as a zero loss in the mean over completions, as TRL's clamp(min=1)
    const double A = advantages[size_t(b)];
    // The weight of each of this completion's tokens in the loss (see GrpoLossType).
    const double per_token = type == GrpoLossType::Bnpo ? 1.0 / double(batch_tokens) : 1.0 / (double(n) * B);
    double seq = 0;
    for (int t = 0; t < T; ++t) {
      const size_t i = row + size_t(t);
      if (!mask[i]) continue;
      const ClippedTokenLoss policy = clipped_token_loss(std::exp(double(logp[i]) - double(old_logp[i])), A, clip);
      const double kl = k3_kl(ref_logp[i], logp[i]);
      seq += policy.loss + beta * kl;
      kl_sum += kl;
      clipped += policy.cut ? 1 : 0;
      out.dlogp[i] = static_cast<float>((policy.dlogp + beta * k3_kl_grad(ref_logp[i], logp[i])) * per_token);
    }
    out.loss += seq * per_token;
    out.tokens += n;
  }
  if (out.tokens > 0) {
    out.kl = kl_sum / double(out.tokens);
    out.clip_ratio = clipped / double(out.tokens);
  }
  return out;
}

}  // namespace engine
