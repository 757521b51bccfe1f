// The Models page's logic without a UI: reading a model's card from its workbench.json (every part
// optional, broken files are no card), the display rows of evaluation results, and the arith / facts /
// chat evaluations of a tiny model (counts, progress, stop, bad requests) through modeleval.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include "engine/error.h"
#include "services/modelcard.h"
#include "services/modelevaluation.h"
#include "support/tiny_text_model.h"

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const engine::Error& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

QStringList field(const QVariantList& rows, const char* key) {
  QStringList out;
  for (const QVariant& r : rows) out << r.toMap().value(QLatin1String(key)).toString();
  return out;
}

const QByteArray kArith = R"({"task":"arith","n":4,"correct":3,"accuracy":0.75,
  "categories":{"mul_1d":{"n":1,"correct":0,"accuracy":0},"add_2d":{"n":2,"correct":2,"accuracy":1},
                "sub_1d":{"n":1,"correct":1,"accuracy":1}},"examples":[]})";

}  // namespace

class TestModelEvaluation : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model;

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath("tiny");
    writeTinyTextModel(m_model, 4, 128);
  }

  void no_card_without_a_card_object() {
    const QString dir = m_dir.filePath("no-card");
    QVERIFY(QDir().mkpath(dir));
    QVERIFY(modelcard::readModelCard(dir).isEmpty());  // no workbench.json
    QVERIFY(modelcard::readModelCard(QString()).isEmpty());
    writeFile(dir + "/workbench.json", R"({"created_by":"train","evals":{"arith":)" + kArith + "}}");
    QVERIFY(modelcard::readModelCard(dir).isEmpty());  // evals alone make no card
    writeFile(dir + "/workbench.json", R"({"card":"a string"})");
    QVERIFY(modelcard::readModelCard(dir).isEmpty());
    writeFile(dir + "/workbench.json", "{\"card\":{\"title\":\"cut off");
    QVERIFY(modelcard::readModelCard(dir).isEmpty());
  }

  void full_card_and_optional_parts() {
    const QString dir = m_dir.filePath("card");
    QVERIFY(QDir().mkpath(dir));
    writeFile(dir + "/workbench.json", R"({"created_by":"recipe","recipe":{"steps":[1,2]},
      "card":{"title":"Starter","summary":"Knows its world.","trained_on":["stories","chat", 7, ""],
              "limitations":"A toy that knows only its own small world."},
      "evals":{"chat":{"task":"chat","n":2,"correct":1,"accuracy":0.5,
                       "categories":{"stops":{"n":2,"correct":1,"accuracy":0.5},"in_template":{"n":2,"correct":2,"accuracy":1}}},
               "arith":)" + kArith + R"(, "broken": 3, "facts": {"task":"facts"}}})");
    const QVariantMap card = modelcard::readModelCard(dir);
    QCOMPARE(card.value("title").toString(), QStringLiteral("Starter"));
    QCOMPARE(card.value("summary").toString(), QStringLiteral("Knows its world."));
    QCOMPARE(card.value("trainedOn").toStringList(), QStringList({"stories", "chat"}));
    QCOMPARE(card.value("limitations").toString(), QStringLiteral("A toy that knows only its own small world."));
    const QVariantList evals = card.value("evals").toList();
    QCOMPARE(field(evals, "task"), QStringList({"arith", "chat"}));  // known order; broken entries skipped
    const QVariantMap arith = evals[0].toMap();
    QCOMPARE(arith.value("n").toInt(), 4);
    QCOMPARE(arith.value("correct").toInt(), 3);
    QCOMPARE(arith.value("accuracy").toDouble(), 0.75);
    QCOMPARE(field(arith.value("categories").toList(), "name"), QStringList({"add_2d", "sub_1d", "mul_1d"}));
    QCOMPARE(field(evals[1].toMap().value("categories").toList(), "name"), QStringList({"stops", "in_template"}));

    // A model given as a file: its workbench.json is the one beside it.
    QCOMPARE(modelcard::readModelCard(dir + "/model.safetensors").value("title").toString(), QStringLiteral("Starter"));

    // Every part is optional; mistyped ones are left out.
    writeFile(dir + "/workbench.json", R"({"card":{"title":5,"summary":"Only this."}})");
    const QVariantMap partial = modelcard::readModelCard(dir);
    QCOMPARE(partial.value("summary").toString(), QStringLiteral("Only this."));
    for (const char* absent : {"title", "trainedOn", "limitations", "evals"}) QVERIFY2(!partial.contains(absent), absent);
  }

  void evaluates_each_task_of_a_tiny_model() {
    std::vector<double> reports;
    const QJsonObject evals = modeleval::evaluateModel(m_model, {"arith", "facts", "chat"}, 4, [&](double f) {
      reports.push_back(f);
      return true;
    }, 8);
    QCOMPARE(evals.keys(), QStringList({"arith", "chat", "facts"}));
    for (const QString& task : evals.keys()) {
      const QJsonObject r = evals.value(task).toObject();
      QCOMPARE(r.value("task").toString(), task);
      QCOMPARE(r.value("n").toInt(), 4);
      QCOMPARE(r.value("accuracy").toDouble(), r.value("correct").toInt() / 4.0);
      int categoryItems = 0;
      const QJsonObject categories = r.value("categories").toObject();
      for (auto it = categories.begin(); it != categories.end(); ++it)
        categoryItems += it.value().toObject().value("n").toInt();
      QCOMPARE(categoryItems, task == "arith" ? 4 : 8);  // facts: seen/unseen + relation; chat: stops + in_template
      QVERIFY(r.value("examples").toArray().size() == 4);
    }
    // Progress only grows, and reaches the end.
    QVERIFY(!reports.empty());
    for (size_t i = 1; i < reports.size(); ++i) QVERIFY(reports[i] >= reports[i - 1]);
    QCOMPARE(reports.back(), 1.0);
    // The same items and greedy replies as the CLI's: a second run gives the same numbers.
    QCOMPARE(modeleval::evaluateModel(m_model, {"arith", "facts", "chat"}, 4, {}, 8), evals);
    QCOMPARE(field(modelcard::evalRows(evals), "task"), QStringList({"arith", "facts", "chat"}));
  }

  void stops_when_told_and_refuses_bad_requests() {
    int calls = 0;
    QCOMPARE(errorOf([&] {
               modeleval::evaluateModel(m_model, {"arith"}, 50, [&](double) { return ++calls < 5; });
             }),
             QStringLiteral("stopped"));
    // The refusal ends the reply being written; the items' own report then says stop once more.
    QVERIFY2(calls == 5 || calls == 6, qPrintable(QString::number(calls)));
    QVERIFY(errorOf([&] { modeleval::evaluateModel(m_model, {"mmlu"}, 4); }).contains("unknown evaluation task 'mmlu'"));
    QVERIFY(!errorOf([&] { modeleval::evaluateModel(m_dir.filePath("missing"), {"arith"}, 4); }).isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestModelEvaluation)
#include "test_model_evaluation.moc"
