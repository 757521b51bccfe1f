// readModelCard / evalRows: see modelcard.h.
#include "services/modelcard.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

namespace modelcard {

namespace {

// workbench.json is a small file our own tools write; anything far bigger is not one.
constexpr qint64 kMaxWorkbenchJsonBytes = 4 * 1024 * 1024;

QVariantMap countOf(const QJsonObject& o) {
  return {{QStringLiteral("n"), o.value(QStringLiteral("n")).toInt()},
          {QStringLiteral("correct"), o.value(QStringLiteral("correct")).toInt()},
          {QStringLiteral("accuracy"), o.value(QStringLiteral("accuracy")).toDouble()}};
}

int taskOrder(const QString& task) {
  static const QStringList known = {QStringLiteral("arith"), QStringLiteral("facts"), QStringLiteral("chat")};
  const int i = known.indexOf(task);
  return i < 0 ? int(known.size()) : i;
}

// Categories in reading order: seen before unseen, add / sub / mul by digits, then the rest by name.
int categoryOrder(const QString& name) {
  static const QStringList first = {QStringLiteral("seen"), QStringLiteral("unseen"), QStringLiteral("stops"),
                                    QStringLiteral("in_template")};
  static const QStringList prefixes = {QStringLiteral("add_"), QStringLiteral("sub_"), QStringLiteral("mul_")};
  if (const int i = first.indexOf(name); i >= 0) return i;
  for (int i = 0; i < prefixes.size(); ++i)
    if (name.startsWith(prefixes[i])) return int(first.size()) + i;
  return int(first.size() + prefixes.size());
}

}  // namespace

QString workbenchJsonPath(const QString& modelPath) {
  const QFileInfo info(modelPath);
  const QString dir = info.isDir() ? info.absoluteFilePath() : info.absolutePath();
  return dir + QStringLiteral("/workbench.json");
}

QVariantMap readModelCard(const QString& modelPath) {
  if (modelPath.isEmpty()) return {};
  QFile f(workbenchJsonPath(modelPath));
  if (!f.open(QIODevice::ReadOnly) || f.size() > kMaxWorkbenchJsonBytes) return {};
  const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
  const QJsonValue cardValue = root.value(QStringLiteral("card"));
  if (!cardValue.isObject()) return {};
  const QJsonObject card = cardValue.toObject();

  QVariantMap out;
  for (const char* key : {"title", "summary", "limitations"}) {
    const QJsonValue v = card.value(QLatin1String(key));
    if (v.isString() && !v.toString().trimmed().isEmpty()) out.insert(QLatin1String(key), v.toString());
  }
  QStringList trainedOn;
  for (const QJsonValue& v : card.value(QStringLiteral("trained_on")).toArray())
    if (v.isString() && !v.toString().trimmed().isEmpty()) trainedOn << v.toString();
  if (!trainedOn.isEmpty()) out.insert(QStringLiteral("trainedOn"), trainedOn);
  const QVariantList evals = evalRows(root.value(QStringLiteral("evals")).toObject());
  if (!evals.isEmpty()) out.insert(QStringLiteral("evals"), evals);
  // A "card" with nothing we can show is still a card: the page shows its frame and the file's name.
  out.insert(QStringLiteral("path"), f.fileName());
  return out;
}

QVariantList evalRows(const QJsonObject& evals) {
  QStringList tasks;
  for (auto it = evals.begin(); it != evals.end(); ++it) {
    const QJsonObject r = it.value().toObject();
    if (r.value(QStringLiteral("n")).isDouble() && r.value(QStringLiteral("accuracy")).isDouble()) tasks << it.key();
  }
  std::stable_sort(tasks.begin(), tasks.end(), [](const QString& a, const QString& b) {
    return taskOrder(a) != taskOrder(b) ? taskOrder(a) < taskOrder(b) : a < b;
  });
  QVariantList rows;
  for (const QString& task : tasks) {
    const QJsonObject r = evals.value(task).toObject();
    QVariantList categories;
    const QJsonObject cats = r.value(QStringLiteral("categories")).toObject();
    for (auto it = cats.begin(); it != cats.end(); ++it) {
      if (!it.value().isObject()) continue;
      QVariantMap c = countOf(it.value().toObject());
      c.insert(QStringLiteral("name"), it.key());
      categories << c;
    }
    std::stable_sort(categories.begin(), categories.end(), [](const QVariant& a, const QVariant& b) {
      const QString x = a.toMap().value(QStringLiteral("name")).toString();
      const QString y = b.toMap().value(QStringLiteral("name")).toString();
      return categoryOrder(x) != categoryOrder(y) ? categoryOrder(x) < categoryOrder(y) : x < y;
    });
    QVariantMap row = countOf(r);
    row.insert(QStringLiteral("task"), task);
    row.insert(QStringLiteral("categories"), categories);
    rows << row;
  }
  return rows;
}

}  // namespace modelcard
