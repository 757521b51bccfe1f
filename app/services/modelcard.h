// ModelCard: what a model's workbench.json says about it for the Models page -- the card its recipe
// wrote (title, summary, what it was trained on, its limitations) and its task evaluations -- and the
// display rows of evaluation results, shared by the card and the page's own Evaluate button.
//
// workbench.json (beside the weights; in the model's directory, or beside a single model file):
//   {"card": {"title": str, "summary": str, "trained_on": [str, ...], "limitations": str},
//    "evals": {task: result of engine::task_eval_json, ...}, ...}
// Missing or mistyped keys leave their part out; no "card" object means no card at all (an empty map),
// even when "evals" is there. A file that cannot be read or parsed is no card either: the model still opens.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QVariantList>
#include <QVariantMap>

namespace modelcard {

// Where the workbench.json of the model at `modelPath` (a directory or a file) would be.
QString workbenchJsonPath(const QString& modelPath);

// {title?, summary?, trainedOn?: [str], limitations?, evals?: evalRows(...)}; {} when there is no card.
QVariantMap readModelCard(const QString& modelPath);

// Task evaluation results keyed by task (engine::task_eval_json objects) as rows for display:
// [{task, n, correct, accuracy, categories: [{name, n, correct, accuracy}]}], arith, facts and chat
// first, then any other task by name; categories in reading order (seen, unseen; stops, in_template;
// add_, sub_, mul_ by digits; then by name). Entries that are not result objects are skipped.
QVariantList evalRows(const QJsonObject& evals);

}  // namespace modelcard
