// The Chat page's sampling settings outlive the app: set in one AppController (one session), they
// are there in the next, through AppSettings (QSettings, in Qt's test location here).
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "services/appcontroller.h"
#include "services/appsettings.h"
#include "services/chatcontroller.h"

class TestChatSamplingPersist : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(m_dir.isValid());
    qputenv("WB_SESSION_DB", m_dir.filePath(QStringLiteral("sessions.db")).toUtf8());
    qputenv("WB_DATA_DIR", m_dir.filePath(QStringLiteral("share")).toUtf8());
  }
  void cleanupTestCase() { QSettings().clear(); }

  void appSettingsKeepTheMap() {
    const QVariantMap sampling{{QStringLiteral("temperature"), 0.3}, {QStringLiteral("stop"), QStringLiteral("END")}};
    {
      AppSettings settings;
      settings.setChatSampling(sampling);
    }
    AppSettings again;
    QCOMPARE(again.chatSampling(), sampling);
    again.setChatSampling({});
    QVERIFY(AppSettings().chatSampling().isEmpty());
  }

  void settingsSurviveARestart() {
    {
      AppController app;
      ChatController* chat = app.chat();
      QCOMPARE(chat->generationSettings().value(QStringLiteral("temperature")).toDouble(), 0.8);
      chat->setGenerationSettings({{QStringLiteral("temperature"), 0.25},
                                   {QStringLiteral("topP"), 0.5},
                                   {QStringLiteral("maxTokens"), 77}});
    }
    AppController app;
    const QVariantMap restored = app.chat()->generationSettings();
    QCOMPARE(restored.value(QStringLiteral("temperature")).toDouble(), 0.25);
    QCOMPARE(restored.value(QStringLiteral("topP")).toDouble(), 0.5);
    QCOMPARE(restored.value(QStringLiteral("maxTokens")).toInt(), 77);
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestChatSamplingPersist)

#include "test_chat_sampling_persist.moc"
