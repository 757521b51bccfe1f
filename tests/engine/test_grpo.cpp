// GRPO below the CLI:
//   - the group-relative advantages, the k3 KL estimator and the clipped per-token objective against
//     hand-computed values, and the objective's gradient against finite differences;
//   - the loss, its KL and clip-ratio metrics and its gradient against TRL's own GRPOTrainer._compute_loss;
//   - the prompts JSONL parser's errors by line, the programmatic reward, and the prompt index loader's order
//     and resume;
//   - the objective on a tiny model: one step's metrics, KL 0 against the starting model, and the same rollouts
//     from the same step seed.
#include <QtTest>

#include <cmath>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/align/grpo_losses.h"
#include "engine/align/grpo_objective.h"
#include "engine/align/prompt_data.h"
#include "engine/align/reference_policy.h"
#include "engine/align/rollouts.h"
#include "engine/backend.h"
#include "engine/model_loader.h"
#include "engine/train/train_model.h"
#include "support/error_of.h"
#include "support/online_fixture.h"

using namespace engine;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

bool near(double a, double b, double tol = 1e-5) { return std::fabs(a - b) <= tol * (1 + std::fabs(b)); }

}  // namespace

class TestGrpo : public QObject {
  Q_OBJECT

 private slots:
  void group_advantages_hand_values() {
    // Group 1: one right of four: mean 0.25, unbiased std sqrt((0.75^2 + 3 * 0.25^2) / 3) = 0.5.
    // Group 2: all right: std 0, so every advantage is 0 (nothing to compare).
    const std::vector<float> r = {1, 0, 0, 0, 1, 1, 1, 1};
    const std::vector<float> a = group_advantages(r, 4);
    QCOMPARE(a.size(), size_t(8));
    QVERIFY(near(a[0], 0.75 / (0.5 + 1e-4)));
    for (int i = 1; i < 4; ++i) QVERIFY(near(a[size_t(i)], -0.25 / (0.5 + 1e-4)));
    for (int i = 4; i < 8; ++i) QCOMPARE(a[size_t(i)], 0.0f);
    const std::vector<float> s = group_reward_std(r, 4);
    QVERIFY(near(s[0], 0.5));
    QCOMPARE(s[1], 0.0f);
    // Two of a group: mean 0.5, std sqrt(0.5).
    const std::vector<float> two = group_advantages(std::vector<float>{0, 1}, 2);
    QVERIFY(near(two[1], 0.5 / (std::sqrt(0.5) + 1e-4)));
    QVERIFY(near(two[0], -two[1]));
    QVERIFY(error_of([] { group_advantages(std::vector<float>{1, 0, 1}, 2); }).contains("not groups of 2"));
    QVERIFY(error_of([] { group_advantages(std::vector<float>{1}, 1); }).contains("at least 2"));
  }

  void loss_matches_trl_itself() {
    // TRL's GRPOTrainer._compute_loss (loss_type "grpo", token-level ratios, epsilon_low = epsilon_high) on fixed
    // per-token log-probs, with torch.autograd's gradient (tests/tools/make_trl_loss_fixture.py); float32 there.
    std::ifstream in(std::string(WB_TEST_DATA_DIR) + "/train/trl_loss_fixture.json");
    QVERIFY(in.good());
    const nlohmann::json fx = nlohmann::json::parse(in);
    QCOMPARE(fx["grpo"].size(), size_t(2));
    for (const nlohmann::json& c : fx["grpo"]) {
      const int B = c["B"].get<int>(), T = c["T"].get<int>();
      const auto logp = c["logp"].get<std::vector<float>>(), old_logp = c["old_logp"].get<std::vector<float>>(),
                 ref_logp = c["ref_logp"].get<std::vector<float>>(), adv = c["advantages"].get<std::vector<float>>();
      const auto mask = c["mask"].get<std::vector<uint8_t>>();
      const GrpoLossResult r =
          grpo_loss(logp, old_logp, ref_logp, mask, adv, B, T, c["clip"].get<double>(), c["beta"].get<double>());
      auto near = [](double ours, const nlohmann::json& theirs, double tol) {
        return std::fabs(ours - theirs.get<double>()) <= tol * std::max(1.0, std::fabs(theirs.get<double>()));
      };
      QVERIFY2(near(r.loss, c["loss"], 1e-6), qPrintable(QString("loss %1 vs %2").arg(r.loss).arg(c["loss"].get<double>())));
      // TRL reports the KL only when it is in the loss (beta > 0); the engine always measures it.
      if (!c["kl"].is_null())
        QVERIFY2(near(r.kl, c["kl"], 1e-6), qPrintable(QString("kl %1 vs %2").arg(r.kl).arg(c["kl"].get<double>())));
      QVERIFY(near(r.clip_ratio, c["clip_ratio"], 1e-7));
      QVERIFY(c["clip_ratio"].get<double>() > 0.0);  // the fixture does exercise the clipping
      for (size_t i = 0; i < r.dlogp.size(); ++i)
        QVERIFY2(near(r.dlogp[i], c["dlogp"][i], 1e-6),
                 qPrintable(QString("dlogp[%1] %2 vs %3").arg(i).arg(r.dlogp[i]).arg(c["dlogp"][i].get<double>())));
    }
  }

  void k3_kl_hand_values() {
    // p_ref = 0.5, p = 0.25: d = log 2, kl = 2 - log 2 - 1.
    QVERIFY(near(k3_kl(std::log(0.5), std::log(0.25)), 1.0 - std::log(2.0)));
    // p_ref = 0.25, p = 0.5: d = -log 2, kl = 0.5 + log 2 - 1.
    QVERIFY(near(k3_kl(std::log(0.25), std::log(0.5)), std::log(2.0) - 0.5));
    QCOMPARE(k3_kl(-1.234, -1.234), 0.0);
    QCOMPARE(k3_kl_grad(-1.234, -1.234), 0.0);
    for (double ref = -6; ref <= 0; ref += 0.37)
      for (double lp = -6; lp <= 0; lp += 0.41) {
        QVERIFY(k3_kl(ref, lp) >= 0);
        const double h = 1e-6;
        const double fd = (k3_kl(ref, lp + h) - k3_kl(ref, lp - h)) / (2 * h);
        QVERIFY2(near(k3_kl_grad(ref, lp), fd, 1e-4), qPrintable(QString("%1 %2").arg(ref).arg(lp)));
      }
  }

  void grpo_loss_at_ratio_one_is_minus_mean_advantage_plus_kl() {
    // Two completions of 3 positions; the first counts 2 tokens, the second 1.
    const std::vector<float> logp = {-1.0f, -2.0f, -0.5f, -0.7f, -3.0f, -3.0f};
    const std::vector<float> ref = {-1.0f, -1.5f, -9.0f, -0.2f, -3.0f, -3.0f};
    const std::vector<uint8_t> mask = {1, 1, 0, 1, 0, 0};
    const std::vector<float> adv = {0.8f, -0.4f};
    const double beta = 0.1;
    const GrpoLossResult r = grpo_loss(logp, logp, ref, mask, adv, 2, 3, 0.2, beta);
    const double kl1 = k3_kl(-1.5, -2.0), kl3 = k3_kl(-0.2, -0.7);
    // Sequence losses: (-0.8 * 2 + beta * kl1) / 2 and 0.4 + beta * kl3; their mean.
    const double want = ((-1.6 + beta * kl1) / 2 + (0.4 + beta * kl3)) / 2;
    QVERIFY(near(r.loss, want));
    QVERIFY(near(r.kl, (kl1 + kl3) / 3));
    QCOMPARE(r.tokens, int64_t(3));
    QCOMPARE(r.clip_ratio, 0.0);
    // d/dlogp: (-A + beta (1 - exp(ref - logp))) / (n_seq * B); 0 off the mask.
    QVERIFY(near(r.dlogp[0], (-0.8 + 0) / 4));
    QVERIFY(near(r.dlogp[1], (-0.8 + beta * (1 - std::exp(0.5))) / 4));
    QCOMPARE(r.dlogp[2], 0.0f);
    QVERIFY(near(r.dlogp[3], (0.4 + beta * (1 - std::exp(0.5))) / 2));
    QCOMPARE(r.dlogp[4], 0.0f);
  }

  void bnpo_loss_is_one_mean_over_the_batch_tokens() {
    // The case above under loss type "bnpo": the three completion tokens weigh alike, 1/3 each, where the
    // per-completion mean gave the single token of the second completion twice the weight of each of the first's.
    const std::vector<float> logp = {-1.0f, -2.0f, -0.5f, -0.7f, -3.0f, -3.0f};
    const std::vector<float> ref = {-1.0f, -1.5f, -9.0f, -0.2f, -3.0f, -3.0f};
    const std::vector<uint8_t> mask = {1, 1, 0, 1, 0, 0};
    const std::vector<float> adv = {0.8f, -0.4f};
    const double beta = 0.1;
    const GrpoLossResult r = grpo_loss(logp, logp, ref, mask, adv, 2, 3, 0.2, beta, GrpoLossType::Bnpo);
    const double kl1 = k3_kl(-1.5, -2.0), kl3 = k3_kl(-0.2, -0.7);
    QVERIFY(near(r.loss, (-0.8 * 2 + beta * kl1 + 0.4 + beta * kl3) / 3));
    QVERIFY(near(r.kl, (kl1 + kl3) / 3));
    QCOMPARE(r.tokens, int64_t(3));
    QVERIFY(near(r.dlogp[0], -0.8 / 3));
    QVERIFY(near(r.dlogp[1], (-0.8 + beta * (1 - std::exp(0.5))) / 3));
    QCOMPARE(r.dlogp[2], 0.0f);
    QVERIFY(near(r.dlogp[3], (0.4 + beta * (1 - std::exp(0.5))) / 3));
    // Equal lengths: the two normalisations agree.
    const std::vector<uint8_t> even = {1, 1, 0, 1, 1, 0};
    const GrpoLossResult g = grpo_loss(logp, logp, ref, even, adv, 2, 3, 0.2, beta);
    const GrpoLossResult t = grpo_loss(logp, logp, ref, even, adv, 2, 3, 0.2, beta, GrpoLossType::Bnpo);
    QVERIFY(near(g.loss, t.loss));
    for (size_t i = 0; i < g.dlogp.size(); ++i) QVERIFY(near(g.dlogp[i], t.dlogp[i]));
    QVERIFY(grpo_loss_type_from_name("bnpo") == GrpoLossType::Bnpo);
    QCOMPARE(QString(grpo_loss_type_name(grpo_loss_type_from_name("grpo"))), QString("grpo"));
    QVERIFY(error_of([] { grpo_loss_type_from_name("dr_grpo"); }).contains("unknown loss type"));
  }

  void grpo_loss_clips_the_ratio() {
    // ratio = e^0.5 = 1.65 > 1 + 0.2. With A > 0 the clamped branch is smaller: clipped, no policy gradient.
    // With A < 0 the unclamped branch is smaller: it keeps its gradient.
    const std::vector<float> logp = {-1.0f, -1.0f}, old = {-1.5f, -1.5f}, ref = {-1.0f, -1.0f};
    const std::vector<uint8_t> mask = {1, 1};
    const std::vector<float> adv = {2.0f, -2.0f};
    const GrpoLossResult r = grpo_loss(logp, old, ref, mask, adv, 2, 1, 0.2, 0.0);
    const double ratio = std::exp(0.5);
    QVERIFY(near(r.loss, (-(1.2 * 2.0) + -(ratio * -2.0)) / 2));
    QCOMPARE(r.clip_ratio, 0.5);
    QCOMPARE(r.dlogp[0], 0.0f);
    QVERIFY(near(r.dlogp[1], 2.0 * ratio / 2));
    QVERIFY(error_of([&] { grpo_loss(logp, old, ref, mask, adv, 2, 2, 0.2, 0.0); }).contains("do not match"));
  }

  void grpo_loss_gradient_matches_finite_differences_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("grpo") << int(GrpoLossType::Grpo);
    QTest::newRow("bnpo") << int(GrpoLossType::Bnpo);
  }
  void grpo_loss_gradient_matches_finite_differences() {
    QFETCH(int, type);
    const auto lt = GrpoLossType(type);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> lp(-4.0f, -0.1f), shift(-0.6f, 0.6f), a(-2.0f, 2.0f);
    const int B = 3, T = 5;
    std::vector<float> logp(B * T), old(B * T), ref(B * T), adv(B);
    std::vector<uint8_t> mask(B * T);
    for (int i = 0; i < B * T; ++i) {
      logp[size_t(i)] = lp(rng);
      old[size_t(i)] = logp[size_t(i)] + shift(rng);  // ratios in [0.55, 1.8]: some clipped at eps 0.2
      ref[size_t(i)] = lp(rng);
      mask[size_t(i)] = (i % T) >= 1 && i != 7 ? 1 : 0;
    }
    for (float& x : adv) x = a(rng);
    const double clip = 0.2, beta = 0.04;
    const GrpoLossResult r = grpo_loss(logp, old, ref, mask, adv, B, T, clip, beta, lt);
    QVERIFY(r.clip_ratio > 0 && r.clip_ratio < 1);
    for (int i = 0; i < B * T; ++i) {
      // Skip points within h of a clipping boundary, where the objective has a kink.
      const double ratio = std::exp(double(logp[size_t(i)]) - old[size_t(i)]);
      if (std::fabs(ratio - (1 - clip)) < 1e-2 || std::fabs(ratio - (1 + clip)) < 1e-2) continue;
      const double h = 1e-3;
      std::vector<float> up = logp, down = logp;
      up[size_t(i)] += float(h);
      down[size_t(i)] -= float(h);
      const double fd = (grpo_loss(up, old, ref, mask, adv, B, T, clip, beta, lt).loss -
                         grpo_loss(down, old, ref, mask, adv, B, T, clip, beta, lt).loss) /
                        (2 * h);
      QVERIFY2(std::fabs(fd - r.dlogp[size_t(i)]) < 2e-3,
               qPrintable(QString("position %1: fd %2, analytic %3").arg(i).arg(fd).arg(r.dlogp[size_t(i)])));
    }
  }

  void prompts_jsonl_errors_by_line() {
    const std::vector<PromptItem> ok = parse_prompts_jsonl(
        "{\"prompt\":\"What is 2 + 3?\",\"answer\":\"5\",\"kind\":\"arith\"}\n\n"
        "{\"prompt\":\"Where does Mia live?\",\"answer\":\"the red house\",\"kind\":\"facts\",\"extra\":1}\n",
        "p.jsonl");
    QCOMPARE(ok.size(), size_t(2));
    QCOMPARE(ok[1].line, uint64_t(3));
    QVERIFY(ok[1].kind == PromptKind::Facts);
    const auto err = [](const char* text) { return error_of([&] { parse_prompts_jsonl(text, "p.jsonl"); }); };
    QVERIFY(err("{\"prompt\":\"Q\",\"answer\":\"1\",\"kind\":\"arith\"}\n{\"prompt\":\"Q\",\"kind\":\"arith\"}")
                .contains("p.jsonl: line 2: the row has no \"answer\" field"));
    QVERIFY(err("{\"prompt\": [}").contains("line 1: bad JSON"));
    QVERIFY(err("{\"prompt\":\"Q\",\"answer\":\"1\",\"kind\":\"poem\"}").contains("line 1: \"kind\" must be"));
    QVERIFY(err("{\"prompt\":\"Q\",\"answer\":\"one\",\"kind\":\"arith\"}").contains("must hold a number"));
    QVERIFY(err("{\"prompt\":\" \",\"answer\":\"1\",\"kind\":\"arith\"}").contains("\"prompt\" is empty"));
    QVERIFY(err("[1]").contains("must be a JSON object"));
    QVERIFY(err("\n\n").contains("empty"));
  }

  void programmatic_reward_is_exact_match() {
    const PromptItem sum{"What is 43 + 80?", "123", PromptKind::Arith, 1};
    QCOMPARE(programmatic_reward(sum, "43 + 80 = 123."), 1.0f);
    QCOMPARE(programmatic_reward(sum, "124"), 0.0f);
    const PromptItem fact{"Where does Mia live?", "the red house", PromptKind::Facts, 2};
    QCOMPARE(programmatic_reward(fact, "Mia lives in the red house."), 1.0f);
    QCOMPARE(programmatic_reward(fact, "Mia lives in the blue house."), 0.0f);
  }

  void prompt_index_loader_resumes() {
    PromptIndexLoader a(10, 3, true, 5, "p");
    Batch b;
    a.next(b);
    QCOMPARE(b.B, 3);
    QCOMPARE(b.T, 1);
    for (int32_t i : b.inputs) QVERIFY(i >= 0 && i < 10);
    a.next(b);
    PromptIndexLoader c(10, 3, true, 5, "p");
    c.seek(a.position());
    Batch x, y;
    for (int i = 0; i < 5; ++i) {
      a.next(x);
      c.next(y);
      QCOMPARE(x.inputs, y.inputs);
    }
    QVERIFY(error_of([] { PromptIndexLoader(2, 3, false, 0, "p"); }).contains("cannot fill one batch"));
  }

  void objective_step_on_a_tiny_model() {
    auto model = load_model(kTiny, {}, LoadOptions{.dequantize = true});
    auto backend = make_cpu_backend(2);
    TrainModel policy(*model, *backend);
    auto ref = ReferencePolicy::copy_of(*model, *backend);
    GrpoOptions o;
    o.group_size = 3;
    o.max_new_tokens = 6;
    o.seq = 32;
    const PromptSet prompts = tiny_id_prompts();  // every completion runs to max_new_tokens, every reward is 0
    GrpoObjective objective(*ref, *backend, ChatTemplate(), prompts, prompts, o);
    PromptIndexLoader loader(2, 2, false, 0, "p");
    Batch batch;
    loader.next(batch);
    TrainStepOptions so;
    so.dropout_seed = 42;
    policy.zero_grads();
    const ObjectiveResult r = objective.forward_backward(policy, batch, so, 1.0f);
    for (const char* key : {"reward", "reward_std", "kl", "completion_length", "clip_ratio", "frac_reward_zero_std"})
      QVERIFY2(r.metrics.count(key) && std::isfinite(r.metrics.at(key)), key);
    QCOMPARE(r.metrics.at("kl"), 0.0);  // the policy is still the reference
    QCOMPARE(r.metrics.at("clip_ratio"), 0.0);
    QCOMPARE(r.metrics.at("completion_length"), 6.0);
    QCOMPARE(r.metrics.at("frac_reward_zero_std"), 1.0);
    QCOMPARE(r.loss, 0.0);  // advantages 0 and KL 0
    // The same step seed samples the same completions: the same metrics again.
    policy.zero_grads();
    const ObjectiveResult again = objective.forward_backward(policy, batch, so, 1.0f);
    QCOMPARE(again.loss, r.loss);
    const ObjectiveResult v = objective.evaluate(policy, batch);
    QVERIFY(v.metrics.count("accuracy"));
    QCOMPARE(v.loss, 1.0 - v.metrics.at("accuracy"));
    QVERIFY(rollout_sample_seed(42, 0, 1) != rollout_sample_seed(42, 1, 0));
    QVERIFY(rollout_sample_seed(42, 0, 0) != rollout_sample_seed(43, 0, 0));
  }

  // GRPO with LoRA: rollouts are sampled from the adapted policy and the reference is the frozen base. The same
  // step on a full model holding the merged adapters, against a copy of the base, samples the same completions,
  // so it reports the same KL and loss; sampling from the base weights instead would not.
  void lora_policy_samples_with_its_adapters() {
    auto backend = make_cpu_backend(2);
    LoraPolicyTwoWays p(kTiny, *backend);
    GrpoOptions o;
    o.group_size = 3;
    o.max_new_tokens = 6;
    o.seq = 32;
    const PromptSet prompts = tiny_id_prompts();
    GrpoObjective lora_objective(*p.lora_ref, *backend, ChatTemplate(), prompts, prompts, o);
    GrpoObjective full_objective(*p.base_ref, *backend, ChatTemplate(), prompts, prompts, o);
    PromptIndexLoader loader(2, 2, false, 0, "p");
    Batch batch;
    loader.next(batch);
    TrainStepOptions so;
    so.dropout_seed = 7;
    p.lora->zero_grads();
    p.merged->zero_grads();
    const ObjectiveResult a = lora_objective.forward_backward(*p.lora, batch, so, 1.0f);
    const ObjectiveResult b = full_objective.forward_backward(*p.merged, batch, so, 1.0f);
    QVERIFY2(a.metrics.at("kl") > 1e-3, qPrintable(QString::number(a.metrics.at("kl"))));  // not the reference
    QVERIFY2(near(a.metrics.at("kl"), b.metrics.at("kl"), 1e-3),
             qPrintable(QString("%1 vs %2").arg(a.metrics.at("kl")).arg(b.metrics.at("kl"))));
    QVERIFY2(near(a.loss, b.loss, 1e-3), qPrintable(QString("%1 vs %2").arg(a.loss).arg(b.loss)));
    // Only the adapters have gradients, and the base weights are what they were.
    bool any = false;
    for (const TrainableTensor& t : p.lora->trainable())
      for (uint64_t i = 0; i < t.numel && !any; ++i) any = t.grad[i] != 0.0f;
    QVERIFY(any);
    QVERIFY(p.base_untouched());
  }
};

QTEST_GUILESS_MAIN(TestGrpo)
#include "test_grpo.moc"
