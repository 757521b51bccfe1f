// The startup model: which one resolveStartupModel picks and what it falls back to, and the real
// AppController opening the starter model (with the error in view) when `--model` names a file that
// does not load, here a non-GGUF file named .gguf, whose error must say so.
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "services/appcontroller.h"
#include "services/startupmodel.h"
#include "support/tiny_text_model.h"

class TestStartupModel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void resolvesWithTheStarterAsFallback();
  void badCommandLineModelFallsBackToTheStarter();

 private:
  QTemporaryDir m_dir;
  QString m_share, m_starter, m_bad;
};

void TestStartupModel::initTestCase() {
  QStandardPaths::setTestModeEnabled(true);
  QSettings().clear();
  QVERIFY(m_dir.isValid());
  m_share = m_dir.filePath(QStringLiteral("share"));
  qputenv("WB_DATA_DIR", m_share.toUtf8());
  qputenv("WB_SESSION_DB", m_dir.filePath(QStringLiteral("session.db")).toUtf8());
  m_starter = starterModelPath(m_share);
  QVERIFY(QDir().mkpath(m_starter));
  writeTinyTextModel(m_starter, 5, 64);
  m_bad = m_dir.filePath(QStringLiteral("bad.gguf"));
  QFile f(m_bad);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("<html>not a model</html>");
}

void TestStartupModel::resolvesWithTheStarterAsFallback() {
  const StartupModel cmd = resolveStartupModel(m_bad, {}, m_share);
  QCOMPARE(cmd.path, m_bad);
  QCOMPARE(cmd.fallback, m_starter);
  // A missing --model is still tried (its error is what the user needs), with the same fallback.
  const QString missing = m_dir.filePath(QStringLiteral("missing"));
  QCOMPARE(resolveStartupModel(missing, {}, m_share).fallback, m_starter);
  const StartupModel last = resolveStartupModel({}, m_bad, m_share);
  QCOMPARE(last.path, m_bad);
  QCOMPARE(last.fallback, m_starter);
  // The starter itself has nothing to fall back to, nor has anything when there is no starter.
  const StartupModel starter = resolveStartupModel({}, {}, m_share);
  QCOMPARE(starter.path, m_starter);
  QVERIFY(starter.fallback.isEmpty());
  QVERIFY(resolveStartupModel(m_starter, {}, m_share).fallback.isEmpty());
  QVERIFY(resolveStartupModel(m_bad, {}, m_dir.filePath(QStringLiteral("nothing-here"))).fallback.isEmpty());
}

void TestStartupModel::badCommandLineModelFallsBackToTheStarter() {
  AppController app;
  app.start(m_bad);
  QTRY_VERIFY_WITH_TIMEOUT(app.hasModel() && !app.loading(), 20000);
  QCOMPARE(app.modelPath(), m_starter);
  QVERIFY2(app.lastError().contains(QStringLiteral("not a GGUF file")), qPrintable(app.lastError()));
  QVERIFY2(app.lastError().contains(QStringLiteral("bad magic '<htm'")), qPrintable(app.lastError()));
  QVERIFY2(app.statusMessage().contains(QStringLiteral("bad.gguf could not be opened")),
           qPrintable(app.statusMessage()));
}

QTEST_MAIN(TestStartupModel)
#include "test_startup_model.moc"
