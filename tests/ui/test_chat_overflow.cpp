// A chat whose first reply fills the model's whole context, then a second message, on the real Chat
// page with the real AppController and a model that never ends a reply by itself (random weights over
// the GPT-2 vocabulary, as the first starter model was): what every chat with the old default settings
// (replies up to the whole context) came to. The page must stay responsive (a GUI-thread
// heartbeat is never late), the number of items must stay bounded, and each reply must end stored
// with its text and how it ended; the second either answers or says clearly why it cannot.
//
// A watchdog thread ends the test with a message if the GUI thread stops answering for seconds (a
// hang there never returns to the test to fail it).
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QGuiApplication>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QtQml/qqmlextensionplugin.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "engine/model.h"
#include "engine/model_loader.h"

#include "appsingleton.h"
#include "services/appcontroller.h"
#include "services/chatcontroller.h"
#include "services/store/chatstore.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

namespace {

int countItems(const QQuickItem* item) {
  int n = 1;
  for (const QQuickItem* child : item->childItems()) n += countItems(child);
  return n;
}

// Ticks on the GUI thread; remembers the longest wait between two ticks beyond the interval.
class Heartbeat : public QObject {
 public:
  static constexpr int kIntervalMs = 20;
  Heartbeat() {
    m_timer.setInterval(kIntervalMs);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, [this] {
      const qint64 late = m_since.restart() - kIntervalMs;
      if (late > m_maxLateMs) m_maxLateMs = late;
      lastBeatMs.store(m_clock.elapsed());
    });
    m_clock.start();
  }
  void start() {
    m_maxLateMs = 0;
    m_since.start();
    lastBeatMs.store(m_clock.elapsed());
    m_timer.start();
  }
  void stop() { m_timer.stop(); }
  qint64 maxLateMs() const { return m_maxLateMs; }
  qint64 nowMs() const { return m_clock.elapsed(); }

  std::atomic<qint64> lastBeatMs{0};

 private:
  QTimer m_timer;
  QElapsedTimer m_since, m_clock;
  qint64 m_maxLateMs = 0;
};

// Aborts the process with a message when the heartbeat has been silent for `limitMs`.
class Watchdog {
 public:
  Watchdog(const Heartbeat& beat, qint64 limitMs) : m_thread([this, &beat, limitMs] {
    while (!m_done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (m_armed.load() && beat.nowMs() - beat.lastBeatMs.load() > limitMs) {
        std::fprintf(stderr, "FAIL: the GUI thread has not answered for %lld ms: the Chat page hangs\n",
                     static_cast<long long>(limitMs));
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }) {}
  ~Watchdog() {
    m_done.store(true);
    m_thread.join();
  }
  void arm(bool on) { m_armed.store(on); }

 private:
  std::atomic<bool> m_done{false}, m_armed{false};
  std::thread m_thread;
};

}  // namespace

class TestChatOverflow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void cleanupTestCase();
  void secondMessageAfterAFullContext();
  void promptFormatIsNamed();

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<QQmlEngine> m_engine;
  std::unique_ptr<QQuickWindow> m_window;
};

void TestChatOverflow::initTestCase() {
  QStandardPaths::setTestModeEnabled(true);
  QSettings().clear();
  QVERIFY(m_dir.isValid());
  // GPT-2 shape, 4 x 128, random weights: the end-of-text token is one of 50,257, so a reply runs on
  // until the context is full (with a fixed sampling seed, every time).
  const QString modelDir = m_dir.filePath(QStringLiteral("endless"));
  {
    engine::ModelConfig c;
    c.arch = engine::Arch::GPT2;
    c.n_layer = 4, c.n_embd = 128, c.n_head = 4, c.n_kv_head = 4, c.ffn_dim = 512, c.vocab_size = 50257;
    c.max_seq_len = 512;
    engine::Model model(c);
    model.init_random(1);
    engine::save_hf_directory(model, modelDir.toStdString(), WB_GPT2_TOKENIZER_DIR, "{}");
  }
  qputenv("WB_DATA_DIR", m_dir.filePath(QStringLiteral("share")).toUtf8());
  qputenv("WB_SESSION_DB", m_dir.filePath(QStringLiteral("sessions.db")).toUtf8());
  if (QGuiApplication::platformName() == QLatin1String("offscreen"))
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QQuickStyle::setStyle(QStringLiteral("Material"));

  m_controller = std::make_unique<AppController>();
  AppControllerForeign::setInstance(m_controller.get());
  m_engine = std::make_unique<QQmlEngine>();
  m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
  QQmlComponent component(m_engine.get());
  component.setData("import QtQuick\nimport Workbench.Ui\n"
                    "Window { width: 760; height: 480; ChatPage { objectName: \"chatPage\"; anchors.fill: parent } }",
                    QUrl(QStringLiteral("qrc:/test_chat_overflow.qml")));
  // A small window: the long reply is then taller than the message list, as on a laptop.
  m_window.reset(qobject_cast<QQuickWindow*>(component.create()));
  QVERIFY2(m_window, qPrintable(component.errorString()));
  m_window->show();
  QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));

  m_controller->openModel(modelDir);
  QTRY_VERIFY_WITH_TIMEOUT(m_controller->hasModel() && !m_controller->loading(), 60000);
  QVERIFY2(m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));
}

void TestChatOverflow::cleanupTestCase() {
  m_window.reset();
  m_engine.reset();  // QML refers to the controller, so it goes first
  m_controller.reset();
}

void TestChatOverflow::secondMessageAfterAFullContext() {
  ChatController* chat = m_controller->chat();
  const int context = m_controller->modelContextLength();
  QVERIFY(context > 0);
  QVERIFY(chat->newChat() != 0);
  // Replies allowed up to the whole context, as the Chat page's default once was: the model never ends
  // a reply by itself, so the first one runs until the context is full.
  chat->setGenerationSettings({{QStringLiteral("maxTokens"), context}, {QStringLiteral("seed"), 1}});

  Heartbeat beat;
  Watchdog watchdog(beat, 20000);
  beat.start();
  watchdog.arm(true);

  QVERIFY(chat->send(QStringLiteral("Tell me a story about a fox.")));
  QTRY_VERIFY_WITH_TIMEOUT(!chat->generating(), 240000);
  QVERIFY2(chat->lastError().isEmpty(), qPrintable(chat->lastError()));
  QCOMPARE(chat->messages()->rowCount(), 2);
  const StoredMessage first = chat->messages()->rowAt(1).message;
  QVERIFY(!first.content.isEmpty());
  QVERIFY(first.complete);
  const QString firstReason = first.stats.value(QStringLiteral("finishReason")).toString();
  QVERIFY2(firstReason == QLatin1String("context_full") || firstReason == QLatin1String("length"), qPrintable(firstReason));
  QTest::qWait(300);  // the page lays the long reply out
  const int itemsAfterFirst = countItems(m_window->contentItem());

  // The second message: the page must keep answering while it is handled.
  beat.start();
  QVERIFY(chat->send(QStringLiteral("And then?")));
  QTRY_VERIFY_WITH_TIMEOUT(!chat->generating(), 240000);
  QTest::qWait(500);  // and while the page settles after it
  watchdog.arm(false);
  beat.stop();
  // Late by a frame or a database write at most; the bound leaves room for a build machine shared by
  // several compilers (measured up to about 1.2 s there; well under 100 ms on an idle one).
  QVERIFY2(beat.maxLateMs() <= 2000, qPrintable(QStringLiteral("the GUI thread was %1 ms late").arg(beat.maxLateMs())));

  // Bounded: the two new messages add a few hundred items at most, and nothing grows at rest.
  const int itemsAfterSecond = countItems(m_window->contentItem());
  QVERIFY2(itemsAfterSecond < itemsAfterFirst + 400,
           qPrintable(QStringLiteral("%1 items, %2 before").arg(itemsAfterSecond).arg(itemsAfterFirst)));
  QTest::qWait(300);
  QCOMPARE(countItems(m_window->contentItem()), itemsAfterSecond);

  // What is stored: each reply with its text and how it ended, or no reply and a clear message.
  const QList<StoredMessage> path = chat->store()->activePath(chat->currentChatId());
  QVERIFY(path.size() == 3 || path.size() == 4);
  QCOMPARE(path[0].content, QStringLiteral("Tell me a story about a fox."));
  QCOMPARE(path[1].content, first.content);
  QVERIFY(path[1].complete);
  QCOMPARE(path[2].content, QStringLiteral("And then?"));
  if (path.size() == 4) {
    const StoredMessage& second = path[3];
    QCOMPARE(second.role, QStringLiteral("assistant"));
    QVERIFY(second.complete);
    QVERIFY(!second.content.isEmpty());
    const QString reason = second.stats.value(QStringLiteral("finishReason")).toString();
    QVERIFY2(QStringList({"eos", "stop", "length", "context_full"}).contains(reason), qPrintable(reason));
    QVERIFY2(chat->lastError().isEmpty(), qPrintable(chat->lastError()));
  } else {
    QVERIFY(!chat->lastError().isEmpty());  // no reply: the page says why
  }
}

void TestChatOverflow::promptFormatIsNamed() {
  // The page says how chats are written for this model (it names no chat template).
  QQuickItem* format = m_window->findChild<QQuickItem*>(QStringLiteral("promptFormatLabel"));
  QVERIFY(format);
  QTRY_COMPARE(format->property("text").toString(), QStringLiteral("Format: Plain transcript"));
}

QTEST_MAIN(TestChatOverflow)

#include "test_chat_overflow.moc"
