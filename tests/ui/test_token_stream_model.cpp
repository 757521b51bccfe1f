// TokenStreamModel under QAbstractItemModelTester: appends in batches, truncation, forcing an
// alternative, clear; roles carry what the token view binds to; records arrive typed from the App,
// each model taking its own lane.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "services/appcontroller.h"
#include "tokenstreammodel.h"

namespace {

TokenRecord token(int id, const QString& text, double logprob, QList<TokenAlternative> alts = {}) {
  TokenRecord r;
  r.id = id;
  r.text = text;
  r.logprob = logprob;
  r.alternatives = alts;
  return r;
}

TokenAlternative alt(int id, const QString& text, double logprob) { return TokenAlternative{id, text, logprob}; }

}  // namespace

class TestTokenStreamModel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void appendTruncateClear();
  void rolesCarryTokenData();
  void forceAlternativeReplacesAndTruncates();
  void takesItsLaneFromTheSource();
};

void TestTokenStreamModel::appendTruncateClear() {
  TokenStreamModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
  model.append({token(1, QStringLiteral("Once"), -0.1), token(2, QStringLiteral(" upon"), -0.5)});
  QCOMPARE(inserted.count(), 1);  // one batch, one insert
  model.append({token(3, QStringLiteral(" a"), -1.0)});
  model.append({});
  QCOMPARE(inserted.count(), 2);
  QCOMPARE(model.rowCount(), 3);
  QCOMPARE(model.count(), 3);
  QCOMPARE(model.text(), QStringLiteral("Once upon a"));
  QCOMPARE(model.ids(), (QVariantList{1, 2, 3}));
  QCOMPARE(model.ids(2), (QVariantList{1, 2}));
  model.truncate(1);
  QCOMPARE(model.rowCount(), 1);
  model.truncate(5);  // longer than the model: nothing happens
  QCOMPARE(model.rowCount(), 1);
  model.clear();
  QCOMPARE(model.rowCount(), 0);
  QCOMPARE(model.text(), QString());
}

void TestTokenStreamModel::rolesCarryTokenData() {
  TokenStreamModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.append({token(7, QStringLiteral(" the"), std::log(0.25), {alt(7, QStringLiteral(" the"), std::log(0.25))})});
  const QModelIndex i = model.index(0);
  const QHash<int, QByteArray> names = model.roleNames();
  QCOMPARE(names.value(TokenStreamModel::TextRole), QByteArray("text"));
  QCOMPARE(model.data(i, TokenStreamModel::TextRole).toString(), QStringLiteral(" the"));
  QCOMPARE(model.data(i, TokenStreamModel::IdRole).toInt(), 7);
  QVERIFY(qAbs(model.data(i, TokenStreamModel::ProbRole).toDouble() - 0.25) < 1e-9);
  QVERIFY(qAbs(model.data(i, TokenStreamModel::LogprobRole).toDouble() - std::log(0.25)) < 1e-9);
  const QVariantList alts = model.data(i, TokenStreamModel::AlternativesRole).toList();
  QCOMPARE(alts.size(), 1);
  // What the token view's delegate reads of an alternative.
  const QVariantMap first = alts.at(0).toMap();
  QCOMPARE(first.value(QStringLiteral("id")).toInt(), 7);
  QCOMPARE(first.value(QStringLiteral("text")).toString(), QStringLiteral(" the"));
  QVERIFY(qAbs(first.value(QStringLiteral("prob")).toDouble() - 0.25) < 1e-9);
  QVERIFY(!model.data(model.index(1), TokenStreamModel::TextRole).isValid());
}

void TestTokenStreamModel::forceAlternativeReplacesAndTruncates() {
  TokenStreamModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  const QList<TokenAlternative> alts{alt(10, QStringLiteral(" cat"), std::log(0.6)),
                                     alt(11, QStringLiteral(" dog"), std::log(0.3))};
  model.append({token(1, QStringLiteral("A"), -0.1), token(10, QStringLiteral(" cat"), std::log(0.6), alts),
                token(5, QStringLiteral(" sat"), -0.2)});
  QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
  QVERIFY(!model.forceAlternative(1, 5));  // no such alternative
  QVERIFY(!model.forceAlternative(7, 0));  // no such row
  QCOMPARE(model.count(), 3);
  QVERIFY(model.forceAlternative(1, 1));
  QCOMPARE(model.count(), 2);
  QCOMPARE(changed.count(), 1);
  QCOMPARE(model.ids(), (QVariantList{1, 11}));
  QCOMPARE(model.text(), QStringLiteral("A dog"));
  QVERIFY(qAbs(model.get(1).value(QStringLiteral("prob")).toDouble() - 0.3) < 1e-9);
  // The alternatives at that position stay, so the user can switch back.
  QCOMPARE(model.get(1).value(QStringLiteral("alternatives")).toList().size(), 2);
}

void TestTokenStreamModel::takesItsLaneFromTheSource() {
  // A real App, kept away from the user's files: no model is loaded, only its signal is used.
  QStandardPaths::setTestModeEnabled(true);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  qputenv("WB_SESSION_DB", dir.filePath(QStringLiteral("sessions.db")).toUtf8());
  AppController app;
  TokenStreamModel a, b;
  a.setSource(&app);
  a.setLane(QStringLiteral("A"));
  b.setSource(&app);
  b.setLane(QStringLiteral("B"));
  QSignalSpy inserted(&a, &QAbstractItemModel::rowsInserted);
  Q_EMIT app.tokensArrived(QStringLiteral("A"),
                           {token(1, QStringLiteral("x"), -0.1), token(2, QStringLiteral("y"), -0.2)});
  Q_EMIT app.tokensArrived(QStringLiteral("B"), {token(3, QStringLiteral("z"), -0.3)});
  QCOMPARE(inserted.count(), 1);  // the batch stays one insert
  QCOMPARE(a.ids(), (QVariantList{1, 2}));
  QCOMPARE(b.ids(), (QVariantList{3}));
  // Without a source nothing arrives any more.
  a.setSource(nullptr);
  Q_EMIT app.tokensArrived(QStringLiteral("A"), {token(4, QStringLiteral("w"), -0.4)});
  QCOMPARE(a.count(), 2);
  app.shutdown();
}

QTEST_GUILESS_MAIN(TestTokenStreamModel)
#include "test_token_stream_model.moc"
