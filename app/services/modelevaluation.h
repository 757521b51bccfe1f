// Task evaluations of a model from the app (the Models page's Evaluate button): the same held-out
// arith / facts / chat items and exact-match scoring as `llm-workbench-cli eval --task ...`
// (engine/eval/task_eval.h), as one blocking call a UI runs off its thread with LatestTask.
//
// The items are generated with seed 1 in world 1 -- the CLI's defaults -- so the numbers match
// `eval --task T --n N` on the same model. Each call loads its own copy of the model (weights as
// stored), so it never waits behind a chat reply on the EngineWorker.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <functional>

#include "engine/eval/task_eval.h"

namespace modeleval {

// Returns false to stop; a stopped call throws engine::Error "stopped".
using Progress = std::function<bool(double fraction)>;

// Default of the page: enough items for a stable percentage in well under a minute on a small model.
constexpr int kDefaultItems = 100;
constexpr int kDefaultMaxTokens = engine::kTaskEvalMaxTokens;

// {task: engine::task_eval_json result object} for each of `tasks` ("arith", "facts", "chat"), `n`
// items each. Throws engine::Error for an unknown task, a model that cannot be read or has no tokenizer.
QJsonObject evaluateModel(const QString& modelPath, const QStringList& tasks, int n, const Progress& progress = {},
                          int maxTokens = kDefaultMaxTokens);

}  // namespace modeleval
