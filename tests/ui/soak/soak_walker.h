// The UI soak test's random walk (tests/ui/test_ui_soak.cpp): the app as main.cpp builds it, and a
// seeded walk of user actions over it that checks the app's invariants as it goes.
#pragma once

#include <QDir>
#include <QHash>
#include <QList>
#include <QQmlApplicationEngine>
#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <random>

#include "services/appcontroller.h"
#include "services/chatmessagemodel.h"
#include "soak_probes.h"

class QQuickItem;
class QQuickWindow;

// The starter model the build makes (resources/): the app's startup model on a first launch.
inline const QString kStarterModel = QStringLiteral(WB_BUILD_DATADIR "/models/starter");

// Where the app keeps settings and caches: a folder of this run's own, never the user's (and never
// another test's, which may be clearing its settings at the same time).
void isolateUserFolders(const QString& root);

// The whole app as main.cpp builds it: the controller, the QML window on top, the startup model.
class AppUnderTest {
 public:
  // Starts the app on the session database WB_SESSION_DB names; false (and why) when it cannot.
  bool open(QString* why);
  // Quits: the QML first, then the controller (which joins the engine thread).
  void close();
  bool isOpen() const { return m_controller != nullptr; }

  void setRunsRoot(const QString& dir) { m_runsRoot = dir; }
  AppController* app() const { return m_controller.get(); }
  ChatController* chat() const { return m_controller->chat(); }
  QQuickWindow* window() const { return m_window; }
  QQuickItem* page(const QString& key) const;
  QStringList warnings() const { return m_warnings; }

 private:
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<QQmlApplicationEngine> m_engine;
  QQuickWindow* m_window = nullptr;
  QStringList m_warnings;
  QString m_runsRoot;
};

// What one walk did and found, for the report line and the assertions.
struct WalkResult {
  int actions = 0;
  int replies = 0;
  int fullContextReplies = 0;
  int fullContextFollowUps = 0;  // a message sent after a reply that filled the whole context
  int reopens = 0;
  int checkpoints = 0;
  int comparisons = 0;  // Compare opened
  int picks = 0;        // ... and ended with A or B kept
  QStringList failures;
};

// The random walk. Each action is something a user does, done through the QML the user's input
// reaches where that is practical (the page's functions, a delegate's signals, keyboard shortcuts)
// and otherwise through the controller method that QML calls.
class Walker {
 public:
  struct Config {
    quint64 seed = 0;
    qint64 seconds = 100;
    bool skipFullContextFollowUp = false;
    bool printLedger = false;  // kill mode: "saved"/"gone" lines on stdout for the parent
    QString dir;               // scratch folder: database, tiny model, data, runs
  };

  Walker(const Config& config, ActionLog& log) : m_config(config), m_log(log), m_rng(config.seed) {
    m_db = QDir(config.dir).filePath(QStringLiteral("sessions.db"));
    m_app.setRunsRoot(QDir(config.dir).filePath(QStringLiteral("runs")));
    m_tinyModel = QDir(config.dir).filePath(QStringLiteral("tiny"));
    m_trainData = QDir(config.dir).filePath(QStringLiteral("train.txt"));
  }
  ~Walker() { m_app.close(); }

  const WalkResult& result() const { return m_result; }

  // Runs the walk for the configured time; false when it could not start.
  bool run(Heartbeat* heartbeat);
  // Replays a fixed list of action names (fixedSequences); false when the app could not start.
  bool replay(const QStringList& actions, Heartbeat* heartbeat);
  void closeApp() { m_app.close(); }

 private:
  struct Action {
    QString name;
    int weight;
    std::function<void()> run;
  };

  bool prepare();
  bool openApp();
  void defineActions();
  void runAction(const Action& action);
  void fail(const QString& what) {
    m_result.failures << what;
    m_log.add(QStringLiteral("FAIL: ") + what);
  }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }
  bool chance(double p) { return std::bernoulli_distribution(p)(m_rng); }
  QString words(int count);

  // Reply bookkeeping.
  void onReplyFinished(qint64 id, const QString& error);
  bool waitForReply(const QString& what, int timeoutMs = 240000);
  bool idle() const { return !m_app.chat()->generating() && !m_app.app()->loading(); }
  bool waitIdle(const QString& what);
  bool maybeWaitIdle();  // usually waits; sometimes acts on while a reply streams (refusals are paths too)
  void checkpoint(const QString& where);
  void recordSaved();
  void recordGone(const QString& sqlWhere);

  // UI helpers.
  void showPage(int index);
  QQuickItem* delegateAt(int row);
  QList<ChatMessageModel::Row> rows() const { return m_app.chat()->messages()->rows(); }
  bool send(const QString& text);
  // Settings merge: each reply names both the keys the walk varies.
  void setMaxTokens(int tokens, const QString& logitBias = {}) {
    m_app.chat()->setGenerationSettings(
        {{QStringLiteral("maxTokens"), tokens}, {QStringLiteral("logitBias"), logitBias}});
  }

  // The actions.
  void newChat();
  void sendShort();
  void sendLong();
  void sendFillingContext();
  // Fixed sequences only (weight 0 in the walk): the heaviest send, and a sidebar with many chats.
  void sendVeryLong();
  void importManyChats();
  void regenerate();
  void edit();
  void switchBranch();
  void stopMidReply();
  void continueReply();
  // Compare: a second reply to the last message, then a pick of A or B, or a dismissal. Each checks the
  // chat and the saved pairs afterwards.
  void compareReply();
  void pickComparison(const QString& side);
  void cancelComparison();
  void deleteMessageMaybeUndo();
  void deleteChatMaybeUndo();
  void search();
  void switchPage();
  void switchTheme();
  void inspectMessage();
  void trainAndCancel();
  void loadModelMidGeneration();
  void selectOtherChat();
  void reopenDatabase();

  Config m_config;
  ActionLog& m_log;
  std::mt19937_64 m_rng;
  AppUnderTest m_app;
  Heartbeat* m_heartbeat = nullptr;
  QString m_db, m_tinyModel, m_trainData;
  QList<Action> m_actions;
  WalkResult m_result;
  QSet<qint64> m_filledChats;       // chats whose last reply filled the whole context
  QSet<qint64> m_interrupted;       // replies cut off by a reopen: incomplete is their stored state
  QHash<qint64, QString> m_ledger;  // kill mode: message id -> "length hash" printed as saved
  bool m_onStarter = true;
  // The open comparison, as the walk saw it open: the reply compared and its text, and the pairs saved then.
  qint64 m_compareReplyId = 0;
  QString m_compareOriginal;
  int m_pairsBeforeCompare = 0;
};
