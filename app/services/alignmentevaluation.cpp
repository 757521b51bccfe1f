// The Evaluate step of the alignment recipes (see alignmentevaluation.h).
#include "services/alignmentevaluation.h"

#include <QObject>

#include <algorithm>
#include <memory>
#include <string>

#include "engine/align/prompt_data.h"
#include "engine/align/reference_policy.h"
#include "engine/align/reward_model.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/generator.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "engine/train/pair_loader.h"
#include "engine/train/preference_data.h"
#include "engine/train/training_run.h"
#include "services/trainingsetup.h"

namespace finetune {

namespace {

bool report(const Progress& progress, double fraction) { return !progress || progress(fraction); }

double shareOf(const std::vector<bool>& v) {
  return v.empty() ? 0.0 : double(std::count(v.begin(), v.end(), true)) / double(v.size());
}

// What both models are run on, fixed by the starting model's tokenizer and the run's settings.
struct RunContext {
  engine::TrainingRunSpec spec;
  std::string basePath;
  engine::ChatTemplate tmpl;
  int seq = 0;
};

RunContext contextOf(const QVariantMap& settings, const QString& tunedDir, const engine::Model& base) {
  RunContext c;
  c.spec = trainingRunSpec(settings, tunedDir);
  c.basePath = settings.value(QStringLiteral("model")).toString().toStdString();
  if (c.spec.val_every <= 0 || c.spec.val_fraction <= 0)
    throw engine::Error("the run held out no data to evaluate on (its validation share or interval is 0)");
  c.tmpl = engine::training_chat_template(c.spec.chat_template, engine::detect_model_format(c.basePath), nullptr);
  c.seq = c.spec.seq > 0 ? c.spec.seq : std::min(128, base.config().max_seq_len);
  return c;
}

std::unique_ptr<engine::Model> loadF32(const std::string& path) {
  return engine::load_model(path, {}, engine::LoadOptions{.dequantize = true});
}

// Per held-out pair: the sequence log-probs of the chosen and the rejected reply under `model`.
struct PairLogprobs {
  std::vector<float> chosen, rejected;
};

PairLogprobs pairLogprobs(engine::Model& model, engine::Backend& backend, const std::vector<engine::Batch>& pairs,
                          const Progress& progress, double from, double span) {
  const std::unique_ptr<engine::ReferencePolicy> scorer = engine::ReferencePolicy::copy_of(model, backend);
  PairLogprobs out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!report(progress, from + span * double(i) / double(pairs.size()))) return out;
    const std::vector<float> lp = scorer->sequence_logprobs(pairs[i].view());  // rows: chosen, rejected
    out.chosen.push_back(lp[0]);
    out.rejected.push_back(lp[1]);
  }
  return out;
}

std::vector<bool> prefersChosen(const PairLogprobs& lp) {
  std::vector<bool> out;
  for (size_t i = 0; i < lp.chosen.size(); ++i) out.push_back(lp.chosen[i] > lp.rejected[i]);
  return out;
}

AlignmentEvaluation evaluatePairs(const QVariantMap& settings, const QString& tunedDir, const Progress& progress) {
  std::unique_ptr<engine::Model> base = loadF32(settings.value(QStringLiteral("model")).toString().toStdString());
  const RunContext c = contextOf(settings, tunedDir, *base);
  engine::BackendChoice backend = engine::choose_backend(engine::BackendPreference::Auto, c.spec.threads);
  const engine::Tokenizer& tok = *base->tokenizer();

  // The held-out pairs as training holds them out, one pair per batch (rows: chosen, rejected).
  const engine::PreferenceDataset data = engine::load_preference_dataset(c.spec.data_path);
  std::vector<engine::EncodedPair> enc = engine::encode_preference_dataset(data, tok, c.tmpl);
  const size_t nVal = static_cast<size_t>(double(enc.size()) * c.spec.val_fraction);
  if (nVal == 0) throw engine::Error("the run's validation share holds out no preference pair");
  std::vector<engine::EncodedPair> val(std::make_move_iterator(enc.end() - std::ptrdiff_t(nVal)),
                                       std::make_move_iterator(enc.end()));
  engine::PairLoader loader(std::move(val), 1, c.seq, false, 0, tok.eos_id().value_or(0),
                            c.spec.data_path + " (validation part)");
  std::vector<engine::Batch> batches(loader.size());
  for (engine::Batch& b : batches) loader.next(b);

  AlignmentEvaluation out;
  out.recipe = c.spec.recipe == engine::Recipe::Reward ? QStringLiteral("reward") : QStringLiteral("dpo");
  out.heldOut = int64_t(batches.size());
  const PairLogprobs before = pairLogprobs(*base, *backend.backend, batches, progress, 0.0, 0.45);
  base.reset();
  if (!report(progress, 0.5)) return out;

  if (c.spec.recipe == engine::Recipe::Reward) {
    engine::RewardModel rm(tunedDir.toStdString(), c.spec.threads);
    engine::PreferenceDataset heldOut;
    heldOut.pairs.assign(data.pairs.end() - std::ptrdiff_t(nVal), data.pairs.end());
    const engine::PairEvaluation e = engine::evaluate_reward_model(rm, heldOut);
    out.heldOut = e.n;
    AlignmentMeasure accuracy{QObject::tr("Held-out pair accuracy"),
                              QObject::tr("how often the chosen reply ranks above the rejected one: the starting "
                                          "model by its own likelihood of each reply, the reward model by its score")};
    accuracy.before = shareOf(prefersChosen(before));
    accuracy.after = e.accuracy;
    AlignmentMeasure margin{QObject::tr("Mean reward margin"),
                            QObject::tr("score of the chosen reply minus the rejected one, on average (the starting "
                                        "model has no score)")};
    margin.after = e.margin;
    margin.share = false;
    out.measures = {accuracy, margin};
    report(progress, 1.0);
    return out;
  }

  std::unique_ptr<engine::Model> tuned = loadF32(tunedDir.toStdString());
  const PairLogprobs after = pairLogprobs(*tuned, *backend.backend, batches, progress, 0.5, 0.5);
  if (after.chosen.size() != batches.size()) return out;  // stopped
  std::vector<bool> implicitRight;
  double marginSum = 0;
  for (size_t i = 0; i < batches.size(); ++i) {
    const double m = (double(after.chosen[i]) - before.chosen[i]) - (double(after.rejected[i]) - before.rejected[i]);
    implicitRight.push_back(m > 0);
    marginSum += c.spec.dpo_beta * m;
  }
  AlignmentMeasure implicit{QObject::tr("Held-out preference accuracy"),
                            QObject::tr("how often the implicit reward (log-prob relative to the starting model) "
                                        "favours the chosen reply; 0 for the starting model by definition")};
  implicit.after = shareOf(implicitRight);
  AlignmentMeasure likelihood{QObject::tr("Chosen reply more likely"),
                              QObject::tr("how often each model gives the chosen reply a higher log-probability "
                                          "than the rejected one")};
  likelihood.before = shareOf(prefersChosen(before));
  likelihood.after = shareOf(prefersChosen(after));
  AlignmentMeasure margin{QObject::tr("Mean implicit reward margin"),
                          QObject::tr("beta × (chosen − rejected) log-prob gain over the starting model, on average")};
  margin.after = batches.empty() ? 0.0 : marginSum / double(batches.size());
  margin.share = false;
  out.measures = {implicit, likelihood, margin};
  report(progress, 1.0);
  return out;
}

// Greedy replies to the held-out prompts, as the dashboard's val_accuracy generates them (rollouts.cpp).
std::vector<std::string> greedyReplies(const engine::Model& model, engine::Backend& backend,
                                       const engine::PromptSet& set, const std::vector<std::string>& stop,
                                       int maxNewTokens, const Progress& progress, double from, double span) {
  std::vector<std::string> out;
  for (size_t i = 0; i < set.ids.size(); ++i) {
    if (!report(progress, from + span * double(i) / double(set.ids.size()))) return out;
    engine::Generator gen(model, backend, int(set.ids[i].size()) + maxNewTokens);
    engine::GenerateParams gp;
    gp.max_tokens = maxNewTokens;
    gp.sampler.temperature = 0.0f;
    gp.sampler.seed = 1;
    gp.stop = stop;
    out.push_back(gen.generate(set.ids[i], gp).text);
  }
  return out;
}

AlignmentEvaluation evaluatePrompts(const QVariantMap& settings, const QString& tunedDir, int examples,
                                    const Progress& progress) {
  std::unique_ptr<engine::Model> base = loadF32(settings.value(QStringLiteral("model")).toString().toStdString());
  const RunContext c = contextOf(settings, tunedDir, *base);
  engine::BackendChoice backend = engine::choose_backend(engine::BackendPreference::Auto, c.spec.threads);
  const bool ppo = c.spec.recipe == engine::Recipe::Ppo;
  const int maxNew = ppo ? c.spec.ppo.max_new_tokens : c.spec.grpo.max_new_tokens;
  const engine::PromptSplit split =
      engine::split_prompt_set(engine::encode_prompts(engine::load_prompts(c.spec.data_path), *base->tokenizer(), c.tmpl),
                               c.seq, maxNew, c.spec.val_fraction);
  const engine::PromptSet& val = split.val;
  if (val.items.empty()) throw engine::Error("the run's validation share holds out no prompt");
  const std::vector<std::string> stop = c.tmpl.stop_strings();

  AlignmentEvaluation out;
  out.recipe = ppo ? QStringLiteral("ppo") : QStringLiteral("grpo");
  out.heldOut = int64_t(val.items.size());
  const std::vector<std::string> before = greedyReplies(*base, *backend.backend, val, stop, maxNew, progress, 0, 0.5);
  base.reset();
  if (before.size() != val.items.size()) return out;  // stopped
  const std::unique_ptr<engine::Model> tuned = loadF32(tunedDir.toStdString());
  const std::vector<std::string> after = greedyReplies(*tuned, *backend.backend, val, stop, maxNew, progress, 0.5, 0.5);
  if (after.size() != val.items.size()) return out;

  std::vector<bool> rightBefore, rightAfter;
  for (size_t i = 0; i < val.items.size(); ++i) {
    rightBefore.push_back(engine::programmatic_reward(val.items[i], before[i]) > 0);
    rightAfter.push_back(engine::programmatic_reward(val.items[i], after[i]) > 0);
    if (int(i) < examples)
      out.answers.push_back({QString::fromStdString(val.items[i].prompt), QString::fromStdString(val.items[i].answer),
                             QString::fromStdString(before[i]), QString::fromStdString(after[i]), rightBefore.back(),
                             rightAfter.back()});
  }
  AlignmentMeasure accuracy{QObject::tr("Held-out task accuracy"),
                            QObject::tr("share of held-out prompts answered right: greedy replies, checked by exact "
                                        "match against the answer")};
  accuracy.before = shareOf(rightBefore);
  accuracy.after = shareOf(rightAfter);
  out.measures = {accuracy};
  report(progress, 1.0);
  return out;
}

}  // namespace

bool isAlignmentRecipe(const QString& recipe) {
  return recipe == QLatin1String("reward") || recipe == QLatin1String("dpo") || recipe == QLatin1String("grpo") ||
         recipe == QLatin1String("ppo");
}

AlignmentEvaluation evaluateAlignment(const QVariantMap& settings, const QString& tunedDir, int examples,
                                      const Progress& progress) {
  const QString recipe = settings.value(QStringLiteral("recipe")).toString();
  if (recipe == QLatin1String("reward") || recipe == QLatin1String("dpo"))
    return evaluatePairs(settings, tunedDir, progress);
  if (recipe == QLatin1String("grpo") || recipe == QLatin1String("ppo"))
    return evaluatePrompts(settings, tunedDir, examples, progress);
  throw engine::Error("'" + recipe.toStdString() + "' is not an alignment recipe (reward, dpo, grpo or ppo)");
}

}  // namespace finetune
