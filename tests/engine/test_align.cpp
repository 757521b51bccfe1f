// Preference training (reward model, DPO) below the CLI:
//   - the Bradley-Terry and DPO losses and gradients against hand-computed values, finite differences and
//     TRL's formulas on fixed tensors (tests/data/train/preference_fixture.json, tests/tools/make_dpo_fixture.py);
//   - TrainModel's per-token log-probs against log-softmax of its logits with the mask, and the gradients of a
//     sequence log-prob objective and of a scalar head against finite differences;
//   - the reference policy: a frozen copy keeps the starting weights, a LoRA model's base ignores the adapters;
//   - the preference JSONL parser's errors by line, the prompt + reply encoding and the pair batches.
#include <QtTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/align/preference_losses.h"
#include "engine/align/preference_objectives.h"
#include "engine/align/reference_policy.h"
#include "engine/backend.h"
#include "engine/model_loader.h"
#include "engine/train/pair_loader.h"
#include "engine/train/preference_data.h"
#include "engine/train/train_model.h"
#include "support/error_of.h"

using namespace engine;
using nlohmann::json;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

std::vector<float> floats(const json& j) { return j.get<std::vector<float>>(); }

// B rows of T random tokens; targets are the next tokens, with the first `prompt` positions of each row and
// the last one not counted.
struct MaskedBatch {
  int B = 2, T = 10;
  std::vector<int32_t> inputs, targets;
  BatchView view() const { return {inputs.data(), targets.data(), nullptr, B, T}; }
};
MaskedBatch masked_batch(uint64_t seed, int prompt = 3) {
  MaskedBatch b;
  std::mt19937_64 rng(seed);
  b.inputs.resize(size_t(b.B * b.T));
  b.targets.assign(size_t(b.B * b.T), -1);
  for (auto& x : b.inputs) x = int32_t(rng() % 512);
  for (int r = 0; r < b.B; ++r)
    for (int t = prompt; t + 1 < b.T; ++t) b.targets[size_t(r * b.T + t)] = b.inputs[size_t(r * b.T + t + 1)];
  return b;
}

float* grad_of(TrainModel& tm, const std::string& name) {
  for (const TrainableTensor& t : tm.trainable())
    if (t.name == name) return t.grad;
  return nullptr;
}

}  // namespace

class TestAlign : public QObject {
  Q_OBJECT
  BackendChoice m_be = choose_backend(BackendPreference::Auto, 1);

  // The reward-model and DPO losses, metrics and gradients against a fixture's values: losses and metrics to
  // 1e-6, gradients to grad_tol (relative to the value where it exceeds 1).
  static void check_preference_fixture(const char* file, double grad_tol) {
    std::ifstream in(std::string(WB_TEST_DATA_DIR) + "/train/" + file);
    QVERIFY2(in.good(), file);
    const json fx = json::parse(in);
    auto near = [](double ours, const json& theirs, double tol) {
      return std::fabs(ours - theirs.get<double>()) <= tol * std::max(1.0, std::fabs(theirs.get<double>()));
    };
    const json& r = fx["reward"];
    const BradleyTerryResult bt = bradley_terry_loss(floats(r["chosen"]), floats(r["rejected"]));
    QVERIFY(near(bt.loss, r["loss"], 1e-6));
    QVERIFY(near(bt.accuracy, r["accuracy"], 1e-7));
    QVERIFY(near(bt.margin, r["margin"], 1e-6));
    QCOMPARE(bt.d_chosen.size(), r["d_chosen"].size());
    for (size_t i = 0; i < bt.d_chosen.size(); ++i) {
      QVERIFY(near(bt.d_chosen[i], r["d_chosen"][i], grad_tol));
      QVERIFY(near(bt.d_rejected[i], r["d_rejected"][i], grad_tol));
    }
    QCOMPARE(fx["dpo"].size(), size_t(2));
    for (const json& c : fx["dpo"]) {
      const DpoResult d = dpo_loss(floats(c["policy_chosen"]), floats(c["policy_rejected"]), floats(c["ref_chosen"]),
                                   floats(c["ref_rejected"]), c["beta"].get<double>());
      QVERIFY(near(d.loss, c["loss"], 1e-6));
      const std::vector<std::pair<const char*, double>> metrics = {{"rewards/chosen", d.rewards_chosen},
                                                                   {"rewards/rejected", d.rewards_rejected},
                                                                   {"rewards/margins", d.margins},
                                                                   {"rewards/accuracies", d.accuracies},
                                                                   {"logps/chosen", d.logps_chosen},
                                                                   {"logps/rejected", d.logps_rejected}};
      for (const auto& [name, v] : metrics) QVERIFY2(near(v, c[name], 1e-6), name);
      QCOMPARE(d.d_chosen.size(), c["d_chosen"].size());
      for (size_t i = 0; i < d.d_chosen.size(); ++i) {
        QVERIFY(near(d.d_chosen[i], c["d_chosen"][i], grad_tol));
        QVERIFY(near(d.d_rejected[i], c["d_rejected"][i], grad_tol));
      }
    }
  }

 private slots:
  void bradley_terry_hand_values() {
    const std::vector<float> c{1.0f, 0.0f}, r{0.0f, 2.0f};
    const BradleyTerryResult bt = bradley_terry_loss(c, r);
    // d = (1, -2): loss = (log(1 + e^-1) + log(1 + e^2)) / 2.
    QVERIFY(std::fabs(bt.loss - (std::log1p(std::exp(-1.0)) + std::log1p(std::exp(2.0))) / 2) < 1e-12);
    QCOMPARE(bt.accuracy, 0.5);
    QCOMPARE(bt.margin, -0.5);
    QVERIFY(std::fabs(bt.d_chosen[0] - (-0.26894142 / 2)) < 1e-7);
    QVERIFY(std::fabs(bt.d_chosen[1] - (-0.88079708 / 2)) < 1e-7);
    QCOMPARE(bt.d_rejected[0], -bt.d_chosen[0]);
    QCOMPARE(bt.d_rejected[1], -bt.d_chosen[1]);
    // A margin far beyond exp's range stays finite (the overflow-free softplus / sigmoid).
    const std::vector<float> big{1000.0f}, small{-1000.0f};
    const BradleyTerryResult wrong = bradley_terry_loss(small, big);
    QVERIFY(std::fabs(wrong.loss - 2000.0) < 1e-9);
    QCOMPARE(wrong.d_chosen[0], -1.0f);
    QCOMPARE(bradley_terry_loss(big, small).loss, 0.0);
    QVERIFY(error_of([&] { bradley_terry_loss(c, big); }).contains("differ in length"));
  }

  void dpo_hand_values() {
    const std::vector<float> pc{-10}, pr{-12}, rc{-11}, rr{-11};
    const DpoResult d = dpo_loss(pc, pr, rc, rr, 0.1);
    // rewards 0.1 and -0.1, z = 0.2: loss = log(1 + e^-0.2), d/dpc = -0.1 sigmoid(-0.2).
    QVERIFY(std::fabs(d.loss - std::log1p(std::exp(-0.2))) < 1e-9);
    QVERIFY(std::fabs(d.rewards_chosen - 0.1) < 1e-9);
    QVERIFY(std::fabs(d.rewards_rejected + 0.1) < 1e-9);
    QVERIFY(std::fabs(d.margins - 0.2) < 1e-9);
    QCOMPARE(d.accuracies, 1.0);
    QCOMPARE(d.logps_chosen, -10.0);
    QCOMPARE(d.logps_rejected, -12.0);
    QVERIFY(std::fabs(d.d_chosen[0] - (-0.1 * 0.45016600)) < 1e-7);
    QCOMPARE(d.d_rejected[0], -d.d_chosen[0]);
    // Policy = reference: every reward is 0, the loss log 2.
    const DpoResult same = dpo_loss(pc, pr, pc, pr, 0.5);
    QVERIFY(std::fabs(same.loss - std::log(2.0)) < 1e-12);
    QCOMPARE(same.accuracies, 0.0);
    QVERIFY(error_of([&] { dpo_loss(pc, pr, rc, rr, 0.0); }).contains("beta"));
  }

  void losses_match_finite_differences() {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<float> u(-3, 3);
    std::vector<float> a(5), b(5), c(5), d(5);
    for (size_t i = 0; i < 5; ++i) a[i] = u(rng), b[i] = u(rng), c[i] = u(rng), d[i] = u(rng);
    const double h = 1e-2;
    auto check = [&](auto loss, std::vector<float>& x, const std::vector<float>& grad) {
      for (size_t i = 0; i < x.size(); ++i) {
        const float keep = x[i];
        x[i] = float(keep + h);
        const double up = loss();
        x[i] = float(keep - h);
        const double down = loss();
        x[i] = keep;
        const double fd = (up - down) / (double(float(keep + h)) - double(float(keep - h)));
        QVERIFY2(std::fabs(fd - grad[i]) < 1e-4, qPrintable(QString("fd %1 vs %2").arg(fd).arg(grad[i])));
      }
    };
    const BradleyTerryResult bt = bradley_terry_loss(a, b);
    check([&] { return bradley_terry_loss(a, b).loss; }, a, bt.d_chosen);
    check([&] { return bradley_terry_loss(a, b).loss; }, b, bt.d_rejected);
    const DpoResult dp = dpo_loss(a, b, c, d, 0.7);
    check([&] { return dpo_loss(a, b, c, d, 0.7).loss; }, a, dp.d_chosen);
    check([&] { return dpo_loss(a, b, c, d, 0.7).loss; }, b, dp.d_rejected);
  }

  void losses_match_trl_formulas() {
    // TRL's formulas written out in plain Python (tests/tools/make_dpo_fixture.py), evaluated in double.
    check_preference_fixture("preference_fixture.json", 1e-7);
  }

  void losses_match_trl_itself() {
    // TRL's own RewardTrainer.compute_loss and DPOTrainer._compute_loss on the same float32 inputs, gradients
    // from torch.autograd (tests/tools/make_trl_loss_fixture.py). TRL computes in float32: float32 tolerances.
    check_preference_fixture("trl_loss_fixture.json", 1e-6);
  }

  void token_logprobs_are_masked_log_softmax() {
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be.backend);
    const MaskedBatch b = masked_batch(1);
    const std::vector<float> logits = tm.logits(b.inputs.data(), b.B, b.T);
    const std::vector<float> lp = tm.forward_token_logprobs(b.view(), {});
    QCOMPARE(tm.token_logprobs(b.view()), lp);  // the training forward without dropout = the no-gradient one
    const int V = 512;
    for (int i = 0; i < b.B * b.T; ++i) {
      if (b.targets[size_t(i)] < 0) {
        QCOMPARE(lp[size_t(i)], 0.0f);
        continue;
      }
      double mx = -1e30, sum = 0;
      for (int v = 0; v < V; ++v) mx = std::max(mx, double(logits[size_t(i) * V + v]));
      for (int v = 0; v < V; ++v) sum += std::exp(double(logits[size_t(i) * V + v]) - mx);
      const double want = double(logits[size_t(i) * V + size_t(b.targets[size_t(i)])]) - mx - std::log(sum);
      QVERIFY(std::fabs(lp[size_t(i)] - want) < 1e-4);
    }
    const std::vector<float> seq = sequence_logprobs(lp, b.B, b.T);
    double row0 = 0;
    for (int t = 0; t < b.T; ++t) row0 += lp[size_t(t)];
    QVERIFY(std::fabs(seq[0] - row0) < 1e-4);
    QVERIFY(seq[0] < 0 && seq[1] < 0);
  }

  // J = sum_b c_b * (sequence log-prob of row b): the backward's gradients against central differences.
  void sequence_logprob_gradient_matches_finite_differences() {
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be.backend);
    const MaskedBatch b = masked_batch(2);
    const std::vector<float> coef{0.7f, -1.3f};
    auto J = [&] {
      const std::vector<float> s = sequence_logprobs(tm.token_logprobs(b.view()), b.B, b.T);
      return double(coef[0]) * s[0] + double(coef[1]) * s[1];
    };
    tm.zero_grads();
    const std::vector<float> lp = tm.forward_token_logprobs(b.view(), {});
    std::vector<float> dlogp(lp.size());
    for (size_t i = 0; i < dlogp.size(); ++i) dlogp[i] = coef[i / size_t(b.T)];
    tm.backward_token_logprobs(dlogp.data());
    QVERIFY(!error_of([&] { tm.backward_token_logprobs(dlogp.data()); }).isEmpty());  // one backward per forward
    for (const auto& [name, index] : std::vector<std::pair<std::string, int>>{{"wte", b.inputs[12] * 64 + 3},
                                                                              {"h.qkv.weight", 777},
                                                                              {"h.fc.bias", 12},
                                                                              {"lnf.weight", 9},
                                                                              {"wpe", 70}}) {
      float* w = model->param_data(name) + index;
      const float keep = *w, h = 1e-2f;
      *w = keep + h;
      const double up = J();
      *w = keep - h;
      const double down = J();
      *w = keep;
      const double fd = (up - down) / (2.0 * h);
      const double g = grad_of(tm, name)[index];
      QVERIFY2(std::fabs(fd - g) < 1e-4 + 1e-2 * std::fabs(g),
               qPrintable(QString::fromStdString(name) + QString(": fd %1 vs backward %2").arg(fd).arg(g)));
    }
  }

  void scalar_head_gradient_matches_finite_differences() {
    auto model = load_model(kTiny);
    TrainModel tm(*model, *m_be.backend);
    tm.set_scalar_head(kRewardHeadName, initial_reward_head(64, 5));
    QCOMPARE(tm.trainable().back().name, std::string(kRewardHeadName));
    MaskedBatch b = masked_batch(3);
    const BatchView v{b.inputs.data(), nullptr, nullptr, b.B, b.T};
    // J = 2 * value at row 0's position 6 - value at row 1's last position.
    auto J = [&] {
      const std::vector<float> x = tm.scalar_head_values(v);
      return 2.0 * x[6] - double(x[size_t(2 * b.T - 1)]);
    };
    tm.zero_grads();
    const std::vector<float> vals = tm.forward_scalar_head(v, {});
    QCOMPARE(tm.scalar_head_values(v), vals);
    std::vector<float> dv(vals.size(), 0.0f);
    dv[6] = 2.0f;
    dv[size_t(2 * b.T - 1)] = -1.0f;
    tm.forward_scalar_head(v, {});
    tm.backward_scalar_head(dv.data());
    auto check = [&](float* w, double g, const QString& what) {
      const float keep = *w, h = 1e-2f;
      *w = keep + h;
      const double up = J();
      *w = keep - h;
      const double down = J();
      *w = keep;
      const double fd = (up - down) / (2.0 * h);
      QVERIFY2(std::fabs(fd - g) < 1e-4 + 1e-2 * std::fabs(g),
               qPrintable(what + QString(": fd %1 vs %2").arg(fd).arg(g)));
    };
    const TrainableTensor head = tm.trainable().back();
    for (int i : {0, 17, 63}) check(head.value + i, head.grad[i], QString("score.weight[%1]").arg(i));
    for (const auto& [name, index] :
         std::vector<std::pair<std::string, int>>{{"h.attn_proj.weight", 300}, {"wte", b.inputs[4] * 64 + 7}})
      check(model->param_data(name) + index, grad_of(tm, name)[index], QString::fromStdString(name));
  }

  void reference_policy_keeps_the_starting_model() {
    auto model = load_model(kTiny);
    const MaskedBatch b = masked_batch(4);
    TrainModel policy(*model, *m_be.backend);
    const std::vector<float> start = policy.token_logprobs(b.view());
    auto ref = ReferencePolicy::copy_of(*model, *m_be.backend);
    QCOMPARE(ref->token_logprobs(b.view()), start);  // the same forward code: bit for bit
    model->param_data("lnf.weight")[0] += 0.5f;      // training moves the policy ...
    QVERIFY(policy.token_logprobs(b.view()) != start);
    QCOMPARE(ref->token_logprobs(b.view()), start);  // ... never the reference
    QCOMPARE(ref->sequence_logprobs(b.view()), sequence_logprobs(start, b.B, b.T));

    // LoRA: the reference is the policy with its adapters off.
    auto base = load_model(kTiny);
    LoraConfig lora;
    lora.rank = 4;
    TrainModel lp(*base, *m_be.backend, lora);
    const std::vector<float> base_lp = lp.token_logprobs(b.view());
    for (const TrainableTensor& t : lp.trainable())
      for (uint64_t i = 0; i < t.numel; ++i) t.value[i] += 0.05f * float((i % 7) + 1);  // B != 0: adapters act
    auto lref = ReferencePolicy::lora_base(lp);
    QVERIFY(lp.token_logprobs(b.view()) != base_lp);
    QCOMPARE(lref->token_logprobs(b.view()), base_lp);
    QVERIFY(error_of([&] { ReferencePolicy::lora_base(policy); }).contains("no LoRA"));
    TrainModel frozen(*base, *m_be.backend, TrainModel::Frozen{});
    QVERIFY(frozen.trainable().empty());
    QVERIFY(error_of([&] { frozen.forward_token_logprobs(b.view(), {}); }).contains("frozen"));
  }

  void preference_rows_are_checked_by_line_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("needle");
    const QByteArray good = R"({"prompt":"Q?","chosen":"Yes.","rejected":"No."})"
                            "\n";
    QTest::newRow("bad json") << good + "{\"prompt\": [}\n"
                              << "line 2: bad JSON";
    QTest::newRow("not an object") << good + "\n[1,2]\n"
                                   << "line 3: a row must be a JSON object";
    QTest::newRow("no rejected") << good + R"({"prompt":"Q","chosen":"a"})"
                                 << "line 2: the row has no \"rejected\"";
    QTest::newRow("empty chosen") << QByteArray(R"({"prompt":"Q","chosen":" ","rejected":"b"})")
                                  << "line 1: \"chosen\" is empty";
    QTest::newRow("number prompt") << QByteArray(R"({"prompt":3,"chosen":"a","rejected":"b"})")
                                   << "line 1: \"prompt\" must be a string or a list of messages";
    QTest::newRow("same replies") << QByteArray(R"({"prompt":"Q","chosen":"a","rejected":"a"})")
                                  << "line 1: \"chosen\" and \"rejected\" are the same reply";
    QTest::newRow("prompt ends with assistant")
        << QByteArray(R"({"prompt":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}],)"
                      R"("chosen":"a","rejected":"b"})")
        << "line 1: the \"prompt\" list must end with a user message";
    QTest::newRow("bad role") << QByteArray(
                                     R"({"prompt":[{"role":"robot","content":"hi"}],"chosen":"a","rejected":"b"})")
                              << "unknown role";
    QTest::newRow("reply list of two") << QByteArray(R"({"prompt":"Q","chosen":[{"role":"assistant","content":"a"},)"
                                                     R"({"role":"assistant","content":"b"}],"rejected":"b"})")
                                       << "exactly one assistant message";
    QTest::newRow("empty file") << QByteArray("\n \n") << "the data file is empty";
    QTest::newRow("latin-1") << QByteArray("{\"prompt\":\"caf\xE9\"}") << "invalid UTF-8";
  }
  void preference_rows_are_checked_by_line() {
    QFETCH(QByteArray, text);
    QFETCH(QString, needle);
    const QString e = error_of([&] { parse_preference_jsonl(text.toStdString(), "prefs.jsonl"); });
    QVERIFY2(e.startsWith("prefs.jsonl: ") && e.contains(needle), qPrintable(e));
  }

  void pairs_encode_as_chats_and_batch_chosen_then_rejected() {
    const PreferenceDataset d = parse_preference_jsonl(
        R"({"prompt":"What is 2 + 2?","chosen":"4.","rejected":"It is five, I think.","kind":"correct"})"
        "\n\n"
        R"({"prompt":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],)"
        R"("chosen":[{"role":"assistant","content":"Hello!"}],"rejected":"Go away."})"
        "\n",
        "p");
    QCOMPARE(d.pairs.size(), size_t(2));
    QCOMPARE(d.pairs[1].line, uint64_t(3));
    QCOMPARE(d.pairs[1].prompt.size(), size_t(2));
    QCOMPARE(d.pairs[1].chosen, std::string("Hello!"));
    QCOMPARE(d.pairs[0].kind, std::string("correct"));  // kept for evaluations by kind
    QVERIFY(d.pairs[1].kind.empty());
    auto tok = load_tokenizer_from_directory(std::string(WB_TEST_DATA_DIR) + "/../../resources/tokenizers/gpt2");
    QVERIFY(tok);
    const ChatTemplate chatml = *ChatTemplate::from_name("chatml");
    const EncodedReply e = encode_prompt_reply(*tok, chatml, d.pairs[0].prompt, d.pairs[0].chosen);
    const std::vector<int32_t> prompt_ids(e.ids.begin(), e.ids.begin() + std::ptrdiff_t(e.reply_start));
    const std::vector<int32_t> reply_ids(e.ids.begin() + std::ptrdiff_t(e.reply_start), e.ids.end());
    // The prompt is the chat up to the opened assistant turn; the reply is its text and the end-of-turn,
    // the last token of the sequence (the trailing newline of the template is cut).
    QCOMPARE(tok->decode(prompt_ids),
             std::string("<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n"));
    QCOMPARE(tok->decode(reply_ids), std::string("4.<|im_end|>"));

    const std::vector<EncodedPair> pairs = encode_preference_dataset(d, *tok, chatml);
    // T leaves pair 0 two reply tokens; pair 1's longer prompt (a system turn) leaves it none: dropped.
    const int T = int(pairs[0].chosen.reply_start) + 2;
    QVERIFY(pairs[1].chosen.reply_start >= size_t(T));
    PairLoader loader(pairs, 1, T, false, 0, 50256, "p");
    QCOMPARE(loader.size(), size_t(1));
    QCOMPARE(loader.dropped(), size_t(1));
    QCOMPARE(loader.truncated(), size_t(1));  // "It is five, I think." does not fit in two tokens
    Batch batch;
    loader.next(batch);
    QCOMPARE(batch.B, 2);
    QCOMPARE(batch.T, T);
    QCOMPARE(batch.lengths, (std::vector<int32_t>{T, T}));
    // Row 0 = the chosen reply, row 1 = the rejected one; targets only on reply tokens inside the row.
    for (int row = 0; row < 2; ++row) {
      const EncodedReply& r = row == 0 ? pairs[0].chosen : pairs[0].rejected;
      for (int t = 0; t < T; ++t) {
        QCOMPARE(batch.inputs[size_t(row * T + t)], r.ids[size_t(t)]);
        const int32_t want = t + 1 < T && size_t(t + 1) >= r.reply_start ? r.ids[size_t(t + 1)] : -1;
        QCOMPARE(batch.targets[size_t(row * T + t)], want);
      }
    }
    QVERIFY(error_of([&] { PairLoader(pairs, 1, 4, false, 0, 0, "p"); }).contains("use a longer --seq"));
  }
};

QTEST_GUILESS_MAIN(TestAlign)
#include "test_align.moc"
