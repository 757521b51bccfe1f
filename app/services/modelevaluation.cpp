// evaluateModel: see modelevaluation.h.
#include "services/modelevaluation.h"

#include <QJsonDocument>

#include <memory>
#include <optional>
#include <vector>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/eval/task_eval.h"
#include "engine/model_loader.h"

namespace modeleval {

QJsonObject evaluateModel(const QString& modelPath, const QStringList& tasks, int n, const Progress& progress,
                          int maxTokens) {
  std::vector<engine::EvalTask> parsed;
  for (const QString& name : tasks) {
    const std::optional<engine::EvalTask> t = engine::eval_task_from_name(name.toStdString());
    if (!t) throw engine::Error("unknown evaluation task '" + name.toStdString() + "' (arith, facts or chat)");
    parsed.push_back(*t);
  }
  const auto keepGoing = [&progress](double fraction) { return !progress || progress(fraction); };
  // Loading is a fixed small share of the bar; the rest is one equal share per task.
  constexpr double kLoadShare = 0.05;
  if (!keepGoing(0.0)) throw engine::Error("stopped");
  const std::unique_ptr<engine::Model> model = engine::load_model(modelPath.toStdString());
  if (!model->tokenizer())
    throw engine::Error(modelPath.toStdString() + ": the model has no tokenizer, so it cannot be asked questions");
  engine::BackendChoice backend = engine::choose_backend(engine::BackendPreference::Auto, 0);
  if (!keepGoing(kLoadShare)) throw engine::Error("stopped");

  // Asked once per token as well, so Cancel takes effect within one token even on a slow model.
  double done = kLoadShare;
  const engine::ReplyFunction reply = engine::greedy_chat_replier(*model, *backend.backend, model->chat_template(),
                                                                  maxTokens, [&] { return keepGoing(done); });

  QJsonObject out;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const std::vector<engine::EvalItem> items = engine::generate_eval_items(parsed[i], n, 1, 1);
    engine::TaskEvalOptions options;
    options.progress = [&, i](int itemsDone, int total) {
      const double share = (1.0 - kLoadShare) / double(parsed.size());
      done = kLoadShare + share * (double(i) + double(itemsDone) / total);
      return keepGoing(done);
    };
    const engine::TaskEvalResult r = engine::evaluate_task(parsed[i], items, reply, options);
    const QByteArray json = QByteArray::fromStdString(engine::task_eval_json(r));
    out.insert(QString::fromLatin1(engine::eval_task_name(parsed[i])), QJsonDocument::fromJson(json).object());
  }
  return out;
}

}  // namespace modeleval
