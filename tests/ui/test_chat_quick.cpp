// Qt Quick Test runner for the QML TestCases in tests/ui/quick/, against the real Workbench.Ui
// module (the static plugin) and a real AppController behind its `App` singleton (the module's
// Style reads the theme from it), on a throwaway session database and settings.
//
// No model is loaded here, so chat replies go to a fake engine instead (`FakeEngine` in the
// Workbench.Test module): a reply stays "being written" until a test finishes it, and stop requests
// are counted, so the views' generating states can be tested without timing. It stands in for the reward
// scorer too: score requests wait until a test answers them.
#include <QQmlEngine>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest>

#include <memory>

#include "appsingleton.h"
#include "services/appcontroller.h"
#include "support/quick_test_env.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

// Stands in for the engine behind App.chat.
class FakeEngine : public QObject {
  Q_OBJECT
  Q_PROPERTY(int requests READ requests NOTIFY changed)
  Q_PROPERTY(int stops READ stops NOTIFY changed)
  Q_PROPERTY(int scoreRequests READ scoreRequests NOTIFY changed)

 public:
  explicit FakeEngine(ChatController* chat) : m_chat(chat) {
    connect(chat, &ChatController::generateRequested, this, [this] {
      ++m_requests;
      Q_EMIT changed();
    });
    // As the worker does: a stop ends the reply in flight as cancelled.
    connect(chat, &ChatController::stopRequested, this, [this] {
      ++m_stops;
      Q_EMIT changed();
      finish({}, QStringLiteral("cancelled"));
    });
    connect(chat, &ChatController::scoreRequested, this, [this](quint64 requestId) {
      m_pendingScores << requestId;
      ++m_scoreRequests;
      Q_EMIT changed();
    });
  }
  int requests() const { return m_requests; }
  int stops() const { return m_stops; }
  int scoreRequests() const { return m_scoreRequests; }

  // A reward model named `name` is ready ("": none).
  Q_INVOKABLE void useRewardModel(const QString& name) { m_chat->setRewardModel(name); }
  // Answers the oldest score request still waiting.
  Q_INVOKABLE void answerScore(double score) {
    if (!m_pendingScores.isEmpty()) m_chat->handleScore(m_pendingScores.takeFirst(), score, 0);
  }

  // Ends the reply being written with `text` (added to what it has) and `reason`.
  Q_INVOKABLE void finish(const QString& text, const QString& reason = QStringLiteral("eos")) {
    if (!text.isEmpty()) m_chat->handleText(text);
    GenerationStats stats;
    stats.generatedTokens = 1;
    stats.finishReason = reason;
    m_chat->handleFinished(stats);
  }

 Q_SIGNALS:
  void changed();

 private:
  ChatController* m_chat;
  int m_requests = 0;
  int m_stops = 0;
  int m_scoreRequests = 0;
  QList<quint64> m_pendingScores;
};

class Setup : public QObject {
  Q_OBJECT

 public Q_SLOTS:
  void applicationAvailable() {
    prepareQuickTestEnvironment(m_dir);
    m_controller = std::make_unique<AppController>();
    AppControllerForeign::setInstance(m_controller.get());

    ChatController* chat = m_controller->chat();
    QObject::disconnect(chat, &ChatController::generateRequested, m_controller.get(), nullptr);
    QObject::disconnect(chat, &ChatController::stopRequested, m_controller.get(), nullptr);
    QObject::disconnect(chat, &ChatController::scoreRequested, m_controller->rewards(), nullptr);
    m_engine = std::make_unique<FakeEngine>(chat);
    qmlRegisterSingletonInstance("Workbench.Test", 1, 0, "FakeEngine", m_engine.get());
  }
  void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/qt/qml")); }
  void cleanupTestCase() {
    m_engine.reset();
    m_controller.reset();
  }

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<FakeEngine> m_engine;
};

QUICK_TEST_MAIN_WITH_SETUP(chat_quick, Setup)

#include "test_chat_quick.moc"
