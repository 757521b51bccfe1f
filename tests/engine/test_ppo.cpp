// PPO below the CLI:
//   - the KL estimator, per-token rewards, GAE, whitening, the clipped policy and value losses, the mean entropy
//     and the adaptive KL controller against hand-computed values; the losses' gradients against finite
//     differences;
//   - TrainModel's exact per-token entropy against a double-precision one from its logits, and the gradient of an
//     objective mixing log-probs and entropies against central differences on the weights;
//   - the objective on a tiny model: a step's updates and their metrics, nothing learnt yet at the first update
//     (ratio 1, KL 0 against the starting model), the same rollout from the same step seed, and the adaptive
//     coefficient through checkpoint_state / restore_state; objective/entropy and policy/entropy_avg are the exact
//     entropies of the rollout's completion tokens (summed per completion, and per token).
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>

#include "engine/align/grpo_losses.h"
#include "engine/align/ppo_losses.h"
#include "engine/align/ppo_objective.h"
#include "engine/align/preference_objectives.h"
#include "engine/align/prompt_data.h"
#include "engine/align/reference_policy.h"
#include "engine/align/rollouts.h"
#include "engine/backend.h"
#include "engine/model_loader.h"
#include "engine/train/train_model.h"
#include "support/error_of.h"
#include "support/online_fixture.h"
#include "support/train_fixture.h"

using namespace engine;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

bool near(double a, double b, double tol = 1e-5) { return std::fabs(a - b) <= tol * (1 + std::fabs(b)); }

// Central differences of f at x, one coordinate at a time, against `grad`.
void check_gradient(const std::vector<float>& x, const std::vector<float>& grad,
                    const std::function<double(const std::vector<float>&)>& f, const char* what) {
  const float h = 1e-3f;
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<float> up = x, down = x;
    up[i] += h;
    down[i] -= h;
    const double fd = (f(up) - f(down)) / (double(up[i]) - double(down[i]));
    QVERIFY2(std::fabs(fd - grad[i]) < 2e-4,
             qPrintable(QString("%1[%2]: finite difference %3, gradient %4").arg(what).arg(i).arg(fd).arg(grad[i])));
  }
}

float* grad_of(TrainModel& tm, const std::string& name) {
  for (const TrainableTensor& t : tm.trainable())
    if (t.name == name) return t.grad;
  return nullptr;
}

// Per (B*T) row of logits: the entropy of its softmax in double, H = -sum p log p with log p = z - logsumexp(z).
std::vector<double> reference_entropy(const std::vector<float>& logits, int N, int V) {
  std::vector<double> H(size_t(N), 0.0);
  for (int n = 0; n < N; ++n) {
    const float* z = logits.data() + size_t(n) * size_t(V);
    double mx = z[0], sum = 0;
    for (int v = 0; v < V; ++v) mx = std::max(mx, double(z[v]));
    for (int v = 0; v < V; ++v) sum += std::exp(double(z[v]) - mx);
    const double lse = mx + std::log(sum);
    for (int v = 0; v < V; ++v) {
      const double logp = double(z[v]) - lse;
      H[size_t(n)] -= std::exp(logp) * logp;
    }
  }
  return H;
}

// Two rows of 10 random tokens; positions from 3 on predict the next token, the first three do not count.
struct TokenBatch {
  int B = 2, T = 10;
  std::vector<int32_t> inputs, targets;
  BatchView view() const { return {inputs.data(), targets.data(), nullptr, B, T}; }
};
TokenBatch token_batch(uint64_t seed) {
  TokenBatch b;
  std::mt19937_64 rng(seed);
  b.inputs.resize(size_t(b.B * b.T));
  b.targets.assign(size_t(b.B * b.T), -1);
  for (auto& x : b.inputs) x = int32_t(rng() % 512);
  for (int r = 0; r < b.B; ++r)
    for (int t = 3; t + 1 < b.T; ++t) b.targets[size_t(r * b.T + t)] = b.inputs[size_t(r * b.T + t + 1)];
  return b;
}

// A larger final-norm gain scales the logits up: peaked distributions (low entropy, large entropy gradients) beside
// the fixture's own broad ones.
void sharpen(Model& model) {
  float* g = model.param_data("lnf.weight");
  for (int i = 0; i < model.config().n_embd; ++i) g[i] *= 12.0f;
}

}  // namespace

class TestPpo : public QObject {
  Q_OBJECT

 private slots:
  void kl_estimators() {
    QCOMPARE(k1_kl(-1.0, -0.5), 0.5);
    QCOMPARE(k1_kl(-0.5, -1.0), -0.5);  // k1 can be negative on a sample
    QVERIFY(k3_kl(-0.5, -1.0) > 0);     // k3 never is
  }

  void token_rewards_hand_values() {
    // Row 0: completion tokens at 1..3, the score lands on 3. Row 1: one completion token at 0.
    const std::vector<float> kl = {0.1f, 0.2f, -0.1f, 0.3f, 0.5f, 0, 0, 0};
    const std::vector<uint8_t> mask = {0, 1, 1, 1, 1, 0, 0, 0};
    const std::vector<float> scores = {1.0f, -1.0f};
    const std::vector<float> r = ppo_token_rewards(kl, mask, scores, 2, 4, 0.5);
    const std::vector<float> want = {0, -0.1f, 0.05f, 0.85f, -1.25f, 0, 0, 0};
    for (size_t i = 0; i < want.size(); ++i) QVERIFY2(near(r[i], want[i]), qPrintable(QString::number(i)));
    QVERIFY(error_of([&] { ppo_token_rewards(kl, mask, scores, 2, 3, 0.5); }).contains("rows"));
  }

  void gae_hand_values() {
    // gamma 0.9, lambda 0.8, row 0 over its completion tokens 1..3:
    //   t=3: delta = 1.0 - 0.3 = 0.7;                A = 0.7;                    R = 1.0
    //   t=2: delta = -0.2 + 0.9*0.3 - 0.4 = -0.33;   A = -0.33 + 0.72*0.7 = 0.174;  R = 0.574
    //   t=1: delta = 0.1 + 0.9*0.4 - 0.5 = -0.04;    A = -0.04 + 0.72*0.174 = 0.08528;  R = 0.58528
    // Row 1, one token: A = 2.0 - 0.5 = 1.5, R = 2.0.
    const std::vector<float> rewards = {0, 0.1f, -0.2f, 1.0f, 2.0f, 0, 0, 0};
    const std::vector<float> values = {9, 0.5f, 0.4f, 0.3f, 0.5f, 9, 9, 9};  // 9: off the mask, never read
    const std::vector<uint8_t> mask = {0, 1, 1, 1, 1, 0, 0, 0};
    const GaeResult g = gae(rewards, values, mask, 2, 4, 0.9, 0.8);
    const std::vector<float> adv = {0, 0.08528f, 0.174f, 0.7f, 1.5f, 0, 0, 0};
    const std::vector<float> ret = {0, 0.58528f, 0.574f, 1.0f, 2.0f, 0, 0, 0};
    for (size_t i = 0; i < adv.size(); ++i) {
      QVERIFY2(near(g.advantages[i], adv[i]), qPrintable(QString::number(i)));
      QVERIFY2(near(g.returns[i], ret[i]), qPrintable(QString::number(i)));
    }
    // gamma = lambda = 1: the advantage is the sum of the rewards to come minus the value.
    const GaeResult mc = gae(rewards, values, mask, 2, 4, 1.0, 1.0);
    QVERIFY(near(mc.advantages[1], 0.1 - 0.2 + 1.0 - 0.5));
    QVERIFY(error_of([&] { gae(rewards, values, mask, 2, 4, 1.5, 0.9); }).contains("gamma and lambda"));
  }

  void whiten_hand_values() {
    // Masked 1, 2, 3: mean 2, unbiased variance 1; the unmasked 100 neither counts nor comes back.
    const std::vector<float> x = {1, 2, 3, 100};
    const std::vector<uint8_t> mask = {1, 1, 1, 0};
    const std::vector<float> w = whiten(x, mask);
    const double s = 1.0 / std::sqrt(1.0 + 1e-8);
    QVERIFY(near(w[0], -s) && near(w[1], 0) && near(w[2], s) && w[3] == 0);
    const std::vector<float> kept = whiten(x, mask, /*shift_mean=*/false);
    QVERIFY(near(kept[0], 2 - s) && near(kept[2], 2 + s));
    // One entry: centred, nothing to scale by.
    QCOMPARE(whiten(std::vector<float>{5, 7}, std::vector<uint8_t>{0, 1})[1], 0.0f);
  }

  void policy_loss_hand_values() {
    // Token 0: ratio e^0.1 inside the range, A = 1: -1.105170918. Token 1: ratio e^-0.3 = 0.7408 < 0.8 with
    // A = -0.5: the clamped branch 0.5*0.8 = 0.4 is the larger, clipped (no gradient). Token 2: ratio 1, A = 2: -2.
    const std::vector<float> logp = {-1.0f, -0.5f, -2.0f}, old = {-1.1f, -0.2f, -2.0f}, adv = {1.0f, -0.5f, 2.0f};
    const std::vector<uint8_t> mask = {1, 1, 1};
    const PpoPolicyLoss l = ppo_policy_loss(logp, old, adv, mask, 0.2);
    QVERIFY(near(l.loss, (-std::exp(0.1) + 0.4 - 2.0) / 3, 1e-6));
    QVERIFY(near(l.clipfrac, 1.0 / 3));
    QVERIFY(near(l.approxkl, 0.5 * (0.01 + 0.09) / 3, 1e-5));
    QVERIFY(near(l.ratio_mean, (std::exp(0.1) + std::exp(-0.3) + 1) / 3, 1e-6));
    QVERIFY(near(l.dlogp[0], -std::exp(0.1) / 3, 1e-6));
    QCOMPARE(l.dlogp[1], 0.0f);
    QVERIFY(near(l.dlogp[2], -2.0 / 3));
    QCOMPARE(l.tokens, int64_t(3));
    QVERIFY(error_of([&] { ppo_policy_loss(logp, old, adv, mask, 1.5); }).contains("clip range"));
  }

  void value_loss_hand_values() {
    // Token 0: inside the range, 0.5 (0.5 - 1)^2 = 0.125, d = -0.5. Token 1: v - old = 0.5 clamps to 0.2, v_clip 0.7;
    // (1.0)^2 > (0.7)^2: unclipped, 0.5, d = 1. Token 2: v_clip = 0.2, (0.2 - 0.45)^2 = 0.0625 > (0.05)^2: clipped,
    // 0.03125, no gradient.
    const std::vector<float> v = {0.5f, 1.0f, 0.5f}, old = {0.45f, 0.5f, 0.0f}, ret = {1.0f, 0.0f, 0.45f};
    const std::vector<uint8_t> mask = {1, 1, 1};
    const PpoValueLoss l = ppo_value_loss(v, old, ret, mask, 0.2);
    QVERIFY(near(l.loss, (0.125 + 0.5 + 0.03125) / 3, 1e-6));
    QVERIFY(near(l.clipfrac, 1.0 / 3));
    QVERIFY(near(l.dvalues[0], -0.5 / 3) && near(l.dvalues[1], 1.0 / 3));
    QCOMPARE(l.dvalues[2], 0.0f);
  }

  void entropy_and_adaptive_kl_hand_values() {
    const MeanEntropy e = mean_entropy(std::vector<float>{1, 3, 7}, std::vector<uint8_t>{1, 1, 0});
    QCOMPARE(e.entropy, 2.0);
    QCOMPARE(e.dentropy[0], 0.5f);
    QCOMPARE(e.dentropy[2], 0.0f);
    QCOMPARE(mean_entropy(std::vector<float>{1}, std::vector<uint8_t>{0}).entropy, 0.0);  // nothing masked
    QVERIFY(error_of([] { mean_entropy(std::vector<float>{1, 2}, std::vector<uint8_t>{1}); }).contains("length"));

    AdaptiveKlController c(0.1, 6.0, 10000);
    c.update(12.0, 100);  // error 1 clipped to 0.2: x (1 + 0.2 * 100 / 10000)
    QVERIFY(near(c.coef(), 0.1 * 1.002, 1e-12));
    c.update(6.0, 100);  // on target: unchanged
    QVERIFY(near(c.coef(), 0.1 * 1.002, 1e-12));
    c.update(4.5, 100);  // error -0.25 clipped to -0.2
    QVERIFY(near(c.coef(), 0.1 * 1.002 * 0.998, 1e-12));
    c.update(std::nan(""), 100);  // a broken rollout leaves it alone
    QVERIFY(near(c.coef(), 0.1 * 1.002 * 0.998, 1e-12));
    QVERIFY(error_of([] { AdaptiveKlController(0.1, 0, 100); }).contains("target KL"));
  }

  void losses_match_finite_differences() {
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0.0f, 1.0f);
    const int N = 24;
    std::vector<float> logp(N), old(N), adv(N), v(N), old_v(N), ret(N);
    std::vector<uint8_t> mask(N);
    for (int i = 0; i < N; ++i) {
      mask[size_t(i)] = i % 5 != 0;
      old[size_t(i)] = -1.0f - std::fabs(n(rng));
      adv[size_t(i)] = n(rng);
      old_v[size_t(i)] = n(rng);
      ret[size_t(i)] = n(rng);
      // Keep every ratio and value step clear of its clip boundary, where the loss has a kink.
      float d = 0.4f * n(rng);
      while (std::fabs(std::exp(d) - 1.2f) < 0.01f || std::fabs(std::exp(d) - 0.8f) < 0.01f) d += 0.05f;
      logp[size_t(i)] = old[size_t(i)] + d;
      float s = 0.5f * n(rng);
      while (std::fabs(std::fabs(s) - 0.2f) < 0.01f) s += 0.05f;
      v[size_t(i)] = old_v[size_t(i)] + s;
    }
    const PpoPolicyLoss pl = ppo_policy_loss(logp, old, adv, mask, 0.2);
    QVERIFY(pl.clipfrac > 0 && pl.clipfrac < 1);  // both branches are exercised
    check_gradient(
        logp, pl.dlogp, [&](const std::vector<float>& x) { return ppo_policy_loss(x, old, adv, mask, 0.2).loss; },
        "policy loss");
    const PpoValueLoss vl = ppo_value_loss(v, old_v, ret, mask, 0.2);
    QVERIFY(vl.clipfrac > 0 && vl.clipfrac < 1);
    check_gradient(
        v, vl.dvalues, [&](const std::vector<float>& x) { return ppo_value_loss(x, old_v, ret, mask, 0.2).loss; },
        "value loss");
    std::vector<float> token_entropy(logp.size());
    for (size_t i = 0; i < logp.size(); ++i) token_entropy[i] = -logp[i];
    const MeanEntropy en = mean_entropy(token_entropy, mask);
    check_gradient(
        token_entropy, en.dentropy, [&](const std::vector<float>& x) { return mean_entropy(x, mask).entropy; },
        "entropy");
  }

  // The entropy the forwards return (with and without kept activations) is the one of TrainModel::logits' softmax,
  // at the counted positions, and 0 elsewhere.
  void token_entropy_matches_a_double_reference() {
    auto model = load_model(kTiny, {}, LoadOptions{.dequantize = true});
    auto backend = make_cpu_backend(2);
    TrainModel tm(*model, *backend);
    const TokenBatch b = token_batch(5);
    const int N = b.B * b.T, V = model->config().vocab_size;
    double broad_mean = 0;
    for (bool sharp : {false, true}) {
      if (sharp) sharpen(*model);
      const std::vector<double> want = reference_entropy(tm.logits(b.inputs.data(), b.B, b.T), N, V);
      std::vector<float> forward_only, kept;
      const std::vector<float> lp = tm.token_logprobs(b.view(), true, &forward_only);
      const std::vector<float> lp_kept = tm.forward_token_logprobs(b.view(), {}, &kept);
      QCOMPARE(lp_kept, lp);  // asking for the entropy leaves the log-probs alone
      QCOMPARE(lp, tm.token_logprobs(b.view()));
      QCOMPARE(int(forward_only.size()), N);
      QCOMPARE(kept, forward_only);
      double mean = 0;
      int counted = 0;
      for (int i = 0; i < N; ++i) {
        if (b.targets[size_t(i)] < 0) {
          QCOMPARE(forward_only[size_t(i)], 0.0f);
          continue;
        }
        QVERIFY2(std::fabs(forward_only[size_t(i)] - want[size_t(i)]) < 2e-5 * (1 + want[size_t(i)]),
                 qPrintable(QString("position %1: %2 vs %3").arg(i).arg(forward_only[size_t(i)]).arg(want[size_t(i)])));
        QVERIFY(want[size_t(i)] > 0 && want[size_t(i)] < std::log(double(V)));
        mean += want[size_t(i)];
        ++counted;
      }
      mean /= counted;
      if (!sharp) broad_mean = mean;
      else QVERIFY2(mean < 0.5 * broad_mean, qPrintable(QString("mean entropy %1 vs %2").arg(mean).arg(broad_mean)));
    }
  }

  // J = sum_i a_i logp_i + sum_i c_i H_i over the counted positions: backward_token_logprobs(dlogp = a,
  // dentropy = c) against central differences of J on single weights; and the entropy term alone (dlogp = 0).
  void entropy_gradient_matches_finite_differences() {
    auto model = load_model(kTiny, {}, LoadOptions{.dequantize = true});
    sharpen(*model);
    auto backend = make_cpu_backend(2);
    TrainModel tm(*model, *backend);
    const TokenBatch b = token_batch(6);
    const size_t N = size_t(b.B * b.T);
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> a(N), c(N), zero(N, 0.0f);
    for (size_t i = 0; i < N; ++i) {
      a[i] = nd(rng);
      c[i] = 2.0f * nd(rng);
    }
    for (bool with_logp : {true, false}) {
      const std::vector<float>& dlogp = with_logp ? a : zero;
      auto J = [&] {
        std::vector<float> H;
        const std::vector<float> lp = tm.token_logprobs(b.view(), true, &H);
        double j = 0;
        for (size_t i = 0; i < N; ++i) j += double(dlogp[i]) * lp[i] + double(c[i]) * H[i];
        return j;
      };
      tm.zero_grads();
      std::vector<float> H;
      tm.forward_token_logprobs(b.view(), {}, &H);
      tm.backward_token_logprobs(dlogp.data(), c.data());
      double largest = 0;
      for (const auto& [name, index] : std::vector<std::pair<std::string, int>>{{"wte", b.inputs[14] * 64 + 5},
                                                                                {"wte", b.targets[5] * 64 + 17},
                                                                                {"h.qkv.weight", 777},
                                                                                {"h.fc.bias", 12},
                                                                                {"lnf.weight", 9},
                                                                                {"lnf.bias", 30}}) {
        const double fd = central_difference(model->param_data(name)[index], 1e-2f, J);
        const double g = grad_of(tm, name)[index];
        largest = std::max(largest, std::fabs(g));
        QVERIFY2(std::fabs(fd - g) < 2e-3 + 2e-2 * std::fabs(g),
                 qPrintable(QString::fromStdString(name) + QString(": fd %1 vs backward %2").arg(fd).arg(g)));
      }
      QVERIFY2(largest > 0.05, qPrintable(QString("largest gradient %1").arg(largest)));  // not a vacuous check
    }
    // An entropy gradient needs a forward that computed the entropy.
    tm.forward_token_logprobs(b.view(), {});
    QVERIFY(error_of([&] { tm.backward_token_logprobs(zero.data(), c.data()); }).contains("entropy"));
  }

  void objective_step_on_a_tiny_model() {
    auto model = load_model(kTiny, {}, LoadOptions{.dequantize = true});
    auto backend = make_cpu_backend(2);
    TrainModel policy(*model, *backend);
    policy.set_scalar_head(kValueHeadName, initial_reward_head(model->config().n_embd, 3));
    auto ref = ReferencePolicy::copy_of(*model, *backend);
    const PromptSet prompts = tiny_id_prompts();  // every completion runs to max_new_tokens, every score is 0
    PpoOptions o;
    o.max_new_tokens = 6;
    o.seq = 32;
    o.ppo_epochs = 2;
    o.num_minibatches = 2;
    o.target_kl = 0.5;
    PpoObjective objective(*ref, *backend, ChatTemplate(), prompts, prompts, o);
    QCOMPARE(objective.updates_per_step(), 4);
    PromptIndexLoader loader(2, 2, false, 0, "p");
    Batch batch;
    loader.next(batch);
    TrainStepOptions so;
    so.dropout_seed = 42;
    // The rollout the step will sample (the same seed), and the exact entropies of its completion tokens: summed
    // per completion, mean over the completions (objective/entropy), and mean per token.
    double want_entropy = 0, want_token_entropy = 0;
    {
      RolloutOptions ro;
      ro.max_new_tokens = o.max_new_tokens;
      ro.seq = o.seq;
      const Rollouts r = sample_rollouts(*model, *backend, ChatTemplate().stop_strings(), prompts, batch, ro, 42);
      const std::vector<uint8_t> mask = r.completion_mask();
      const int N = r.rows.B * r.rows.T;
      const std::vector<double> H =
          reference_entropy(policy.logits(r.rows.inputs.data(), r.rows.B, r.rows.T), N, model->config().vocab_size);
      int n = 0;
      for (int i = 0; i < N; ++i)
        if (mask[size_t(i)]) {
          want_entropy += H[size_t(i)];
          ++n;
        }
      QCOMPARE(n, 12);  // two completions of 6 tokens
      want_token_entropy = want_entropy / n;
      want_entropy /= r.rows.B;
    }
    policy.zero_grads();
    std::vector<ObjectiveResult> step;
    for (int u = 0; u < 4; ++u) step.push_back(objective.forward_backward_update(policy, batch, so, 1.0f, u));
    const ObjectiveResult& first = step[0];
    for (const char* key :
         {"objective/kl", "objective/entropy", "objective/non_score_reward", "objective/rlhf_reward",
          "objective/scores", "objective/kl_coef", "val/num_eos_tokens", "completion_length", "policy/clipfrac_avg",
          "policy/approxkl_avg", "loss/policy_avg", "loss/value_avg", "val/clipfrac_avg", "val/ratio"})
      QVERIFY2(first.metrics.count(key) && std::isfinite(first.metrics.at(key)), key);
    QCOMPARE(first.metrics.at("objective/kl"), 0.0);  // the policy is still the reference
    QCOMPARE(first.metrics.at("completion_length"), 6.0);
    QCOMPARE(first.metrics.at("objective/scores"), 0.0);
    QCOMPARE(first.metrics.at("objective/kl_coef"), 0.05);
    QVERIFY2(near(first.metrics.at("objective/entropy"), want_entropy, 1e-5),
             qPrintable(QString("%1 vs %2").arg(first.metrics.at("objective/entropy")).arg(want_entropy)));
    // Before any optimizer step the update's policy is the rollout's: policy/entropy_avg is the mean over a
    // minibatch's completion tokens (here one row of 6), so the two minibatches average to the rollout's.
    QVERIFY(near((step[0].metrics.at("policy/entropy_avg") + step[1].metrics.at("policy/entropy_avg")) / 2,
                 want_token_entropy, 1e-5));
    // The weights have not moved (no optimizer here): every update sees ratio 1 and clips nothing.
    for (const ObjectiveResult& r : step) {
      QVERIFY(near(r.metrics.at("val/ratio"), 1.0, 1e-6));
      QCOMPARE(r.metrics.at("policy/clipfrac_avg"), 0.0);
      QVERIFY(std::isfinite(r.loss));
    }
    QCOMPARE(first.samples.size(), size_t(2));
    QVERIFY(!step[1].metrics.count("objective/kl"));  // the rollout's metrics come with update 0 only
    QVERIFY(step[3].metrics.count("val/ratio_var"));
    bool head_learns = false;
    for (const TrainableTensor& t : policy.trainable())
      if (t.name == kValueHeadName)
        for (uint64_t i = 0; i < t.numel; ++i) head_learns |= t.grad[i] != 0.0f;
    QVERIFY(head_learns);

    // KL 0 below the target of 0.5: the coefficient shrinks by 0.2 * 2 / 10000; it survives a checkpoint.
    QVERIFY(near(objective.kl_coef(), 0.05 * (1 - 0.2 * 2 / 10000), 1e-12));
    const std::string state = objective.checkpoint_state();
    PpoObjective resumed(*ref, *backend, ChatTemplate(), prompts, prompts, o);
    resumed.restore_state(state);
    QCOMPARE(resumed.kl_coef(), objective.kl_coef());
    QVERIFY(error_of([&] { resumed.restore_state("kl_coef=fast"); }).contains("not a KL coefficient"));

    // The same step seed samples the same rollout: the same first update again (from the coefficient it used).
    resumed.restore_state("kl_coef=0.05");
    policy.zero_grads();
    const ObjectiveResult again = resumed.forward_backward_update(policy, batch, so, 1.0f, 0);
    QCOMPARE(again.loss, first.loss);
    QCOMPARE(again.metrics.at("objective/entropy"), first.metrics.at("objective/entropy"));

    // Without a value head the objective says so.
    TrainModel bare(*model, *backend);
    QVERIFY(error_of([&] { objective.forward_backward_update(bare, batch, so, 1.0f, 0); }).contains("value head"));
    const ObjectiveResult v = objective.evaluate(policy, batch);
    QCOMPARE(v.loss, 1.0 - v.metrics.at("accuracy"));
  }

  // The entropy bonus: a step with entropy_coef c adds to the gradient exactly what backpropagating
  // -c * (mean exact entropy over the completion tokens) adds, and its loss is the one without minus c times it.
  void entropy_bonus_adds_the_exact_entropy_gradient() {
    auto model = load_model(kTiny, {}, LoadOptions{.dequantize = true});
    sharpen(*model);
    auto backend = make_cpu_backend(2);
    TrainModel policy(*model, *backend);
    policy.set_scalar_head(kValueHeadName, initial_reward_head(model->config().n_embd, 3));
    auto ref = ReferencePolicy::copy_of(*model, *backend);
    const PromptSet prompts = tiny_id_prompts();
    PpoOptions o;
    o.max_new_tokens = 6;
    o.seq = 32;
    o.ppo_epochs = 1;
    o.num_minibatches = 1;
    PromptIndexLoader loader(2, 2, false, 0, "p");
    Batch batch;
    loader.next(batch);
    TrainStepOptions so;
    so.dropout_seed = 5;
    auto wte_grad = [&] {
      const float* g = grad_of(policy, "wte");
      return std::vector<float>(g, g + model->param("wte").numel);
    };
    auto step = [&](double coef) {
      PpoOptions oc = o;
      oc.entropy_coef = coef;
      PpoObjective objective(*ref, *backend, ChatTemplate(), prompts, prompts, oc);
      policy.zero_grads();
      ObjectiveResult r = objective.forward_backward_update(policy, batch, so, 1.0f, 0);
      return std::make_pair(r, wte_grad());
    };
    const double c = 0.5;
    const auto [without, g0] = step(0.0);
    const auto [with, g1] = step(c);
    const double H = with.metrics.at("policy/entropy_avg");
    QVERIFY(near(without.metrics.at("policy/entropy_avg"), H, 1e-6));
    QVERIFY(near(with.loss, without.loss - c * H, 1e-5));

    // The same gradient straight from TrainModel, on the rollout the steps sampled.
    RolloutOptions ro;
    ro.max_new_tokens = o.max_new_tokens;
    ro.seq = o.seq;
    const Rollouts r = sample_rollouts(*model, *backend, ChatTemplate().stop_strings(), prompts, batch, ro, 5);
    const std::vector<uint8_t> mask = r.completion_mask();
    policy.zero_grads();
    std::vector<float> ent;
    policy.forward_token_logprobs(r.rows.view(), so, &ent);
    const MeanEntropy me = mean_entropy(ent, mask);
    QVERIFY(near(me.entropy, H, 1e-5));
    std::vector<float> dlogp(ent.size(), 0.0f), dent(ent.size());
    for (size_t i = 0; i < dent.size(); ++i) dent[i] = static_cast<float>(-c * me.dentropy[i]);
    policy.backward_token_logprobs(dlogp.data(), dent.data());
    const std::vector<float> ge = wte_grad();
    double largest = 0, worst = 0;
    for (size_t i = 0; i < ge.size(); ++i) {
      largest = std::max(largest, double(std::fabs(ge[i])));
      worst = std::max(worst, std::fabs(double(g1[i]) - g0[i] - ge[i]));
    }
    QVERIFY2(largest > 1e-3, qPrintable(QString::number(largest)));
    QVERIFY2(worst < 1e-4 * largest, qPrintable(QString("%1 of %2").arg(worst).arg(largest)));
  }

  // PPO with LoRA: the rollout is sampled from the adapted policy against the frozen base as reference. A full
  // model holding the merged adapters, against a copy of the base, samples the same rollout: the same KL,
  // entropy and first update.
  void lora_policy_samples_with_its_adapters() {
    auto backend = make_cpu_backend(2);
    LoraPolicyTwoWays p(kTiny, *backend);
    for (TrainModel* m : {p.lora.get(), p.merged.get()})
      m->set_scalar_head(kValueHeadName, initial_reward_head(p.model->config().n_embd, 3));
    const PromptSet prompts = tiny_id_prompts();
    PpoOptions o;
    o.max_new_tokens = 6;
    o.seq = 32;
    o.ppo_epochs = 1;
    o.num_minibatches = 1;
    PpoObjective lora_objective(*p.lora_ref, *backend, ChatTemplate(), prompts, prompts, o);
    PpoObjective full_objective(*p.base_ref, *backend, ChatTemplate(), prompts, prompts, o);
    PromptIndexLoader loader(2, 2, false, 0, "p");
    Batch batch;
    loader.next(batch);
    TrainStepOptions so;
    so.dropout_seed = 9;
    p.lora->zero_grads();
    p.merged->zero_grads();
    const ObjectiveResult a = lora_objective.forward_backward_update(*p.lora, batch, so, 1.0f, 0);
    const ObjectiveResult b = full_objective.forward_backward_update(*p.merged, batch, so, 1.0f, 0);
    const double kl = a.metrics.at("objective/kl");
    QVERIFY2(std::fabs(kl) > 1e-3, qPrintable(QString::number(kl)));  // the adapted policy is not the reference
    for (const char* key : {"objective/kl", "objective/entropy", "loss/policy_avg", "loss/value_avg"})
      QVERIFY2(near(a.metrics.at(key), b.metrics.at(key), 1e-3),
               qPrintable(QString("%1: %2 vs %3").arg(key).arg(a.metrics.at(key)).arg(b.metrics.at(key))));
    QVERIFY(p.base_untouched());
  }
};

QTEST_GUILESS_MAIN(TestPpo)
#include "test_ppo.moc"
