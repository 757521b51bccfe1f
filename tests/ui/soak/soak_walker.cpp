// The UI soak test's random walk (see soak_walker.h).
#include "soak_walker.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJSEngine>
#include <QJSValue>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTest>

#include <algorithm>
#include <cstdio>

#include "appsingleton.h"
#include "services/appcontroller.h"
#include "services/appsettings.h"
#include "services/chatcontroller.h"
#include "services/store/chatstore.h"
#include "support/quick_items.h"
#include "support/reply_end_ban.h"
#include "support/tiny_text_model.h"

// Where the app keeps settings and caches: a folder of this run's own, never the user's (and never
// another test's, which may be clearing its settings at the same time).
void isolateUserFolders(const QString& root) {
  for (const char* var : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}) {
    const QString dir = root + QLatin1Char('/') + QString::fromLatin1(var).toLower();
    QDir().mkpath(dir);
    qputenv(var, dir.toUtf8());
  }
}

bool AppUnderTest::open(QString* why) {
  m_warnings.clear();
  m_controller = std::make_unique<AppController>();
  m_controller->training()->setRunsRoot(m_runsRoot);
  AppControllerForeign::setInstance(m_controller.get());
  m_engine = std::make_unique<QQmlApplicationEngine>();
  m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
  QObject::connect(m_engine.get(), &QQmlEngine::warnings, m_engine.get(), [this](const QList<QQmlError>& list) {
    for (const auto& w : list) m_warnings << w.toString();
  });
  m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/Workbench/Ui/Main.qml")));
  if (m_engine->rootObjects().isEmpty()) {
    *why = QStringLiteral("Main.qml did not load: ") + m_warnings.join(QLatin1Char('\n'));
    return false;
  }
  m_window = qobject_cast<QQuickWindow*>(m_engine->rootObjects().constFirst());
  m_window->resize(1200, 780);
  m_window->show();
  if (!QTest::qWaitForWindowExposed(m_window)) {
    *why = QStringLiteral("the window was never exposed");
    return false;
  }
  m_controller->start();  // no --model: the startup choice (the starter model on a first launch)
  if (!waitUntil([&] { return !m_controller->loading() && m_controller->hasModel(); }, 120000)) {
    *why = QStringLiteral("the startup model did not load: ") + m_controller->lastError();
    return false;
  }
  return true;
}
void AppUnderTest::close() {
  m_engine.reset();  // QML refers to the controller, so it goes first
  if (m_controller) m_controller->shutdown();
  m_controller.reset();
  m_window = nullptr;
}

QQuickItem* AppUnderTest::page(const QString& key) const {
  return m_window->findChild<QQuickItem*>(QStringLiteral("page_") + key);
}

QString Walker::words(int count) {
  static const char* const kWords[] = {"the",   "boat",    "sailed", "at",   "dawn", "a",        "story",
                                       "about", "quetzal", "bird",   "plan", "my",   "week",     "tell",
                                       "me",    "more",    "why",    "sky",  "is",   "blue",     "café",
                                       "naïve", "日本",    "🙂",   "code", "`x`",  "**bold**", "\n"};
  QStringList out;
  for (int i = 0; i < count; ++i) out << QString::fromUtf8(kWords[uniform(0, int(std::size(kWords)) - 1)]);
  return out.join(QLatin1Char(' ')).trimmed() + QStringLiteral(" w%1").arg(uniform(0, 99999));
}

bool Walker::prepare() {
  writeTinyTextModel(m_tinyModel, 7, 256);
  QFile data(m_trainData);
  if (!data.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  for (int i = 0; i < 40; ++i) data.write("abba cddc effe ghhg ijji klmm nop aabb ccdd\n");
  data.close();
  defineActions();
  return QFile::exists(m_tinyModel + QStringLiteral("/config.json"));
}

bool Walker::openApp() {
  // Starting the app is not a stall of a running one.
  m_heartbeat->pause();
  QString why;
  const bool opened = m_app.open(&why);
  m_heartbeat->resume();
  if (!opened) {
    fail(why);
    return false;
  }
  m_onStarter = m_app.app()->modelPath() == QDir::cleanPath(kStarterModel);
  // The store's verdict on every reply, read the moment it ends: ChatController emits replyFinished after writing
  // the reply's end to the store. (A check queued for later could run after the walker's next action had deleted,
  // continued or replaced that message -- SQLite even reuses a deleted last row's id.)
  QObject::connect(m_app.chat(), &ChatController::replyFinished, m_app.chat(),
                   [this](qint64 id, const QString& error) { onReplyFinished(id, error); });
  return true;
}

void Walker::onReplyFinished(qint64 id, const QString& error) {
  ++m_result.replies;
  if (!m_app.isOpen()) return;
  const StoredMessage m = m_app.chat()->store()->message(id);
  if (m.id == 0) {
    // A failed reply that wrote nothing leaves no row behind; any other reply must be there.
    if (error.isEmpty()) fail(QStringLiteral("reply %1 finished but is not in the store").arg(id));
    return;
  }
  const QString reason = m.stats.value(QStringLiteral("finishReason")).toString();
  // Whatever the action (a long reply, a model switch waiting for one), a chat whose last reply ran
  // into the end of the context is where the next message meets a full context.
  if (reason == QLatin1String("context_full")) {
    ++m_result.fullContextReplies;
    m_filledChats.insert(m.chatId);
  }
  // The next action may already be writing this reply again (continue, regenerate in place) by the time this
  // queued check runs: the store then rightly says incomplete, and the reply is checked when that writing ends.
  const ChatMessageModel* shown = m_app.chat()->messages();
  const int row = shown->rowOf(id);
  if (m_app.chat()->generating() && row >= 0 && shown->rowAt(row).streaming) {
    m_log.add(QStringLiteral("  reply %1 ended, already being written again").arg(id));
    return;
  }
  if (!m.complete || reason.isEmpty())
    fail(QStringLiteral("reply %1 ended (error '%2') but is stored complete=%3 finishReason='%4'")
             .arg(id)
             .arg(error)
             .arg(int(m.complete))
             .arg(reason));
  m_log.add(QStringLiteral("  reply %1 ended: %2, %3 chars%4")
                .arg(id)
                .arg(reason)
                .arg(m.content.size())
                .arg(error.isEmpty() ? QString() : QStringLiteral(" (") + error + QLatin1Char(')')));
}

bool Walker::waitForReply(const QString& what, int timeoutMs) {
  if (waitUntil([&] { return !m_app.chat()->generating(); }, timeoutMs)) {
    QTest::qWait(0);  // the queued store check of the reply runs
    return true;
  }
  fail(QStringLiteral("%1: the reply did not end within %2 s").arg(what).arg(timeoutMs / 1000));
  return false;
}

bool Walker::waitIdle(const QString& what) {
  if (!waitForReply(what)) return false;
  if (!waitUntil([&] { return !m_app.app()->loading(); }, 120000)) {
    fail(what + QStringLiteral(": a model load did not end within 120 s"));
    return false;
  }
  return true;
}

bool Walker::maybeWaitIdle() {
  if (idle() || chance(0.15)) return true;
  return waitIdle(QStringLiteral("waiting before the next action"));
}

void Walker::showPage(int index) {
  QQuickWindow* w = m_app.window();
  if (chance(0.5)) {
    w->requestActivate();
    QTest::keyClick(w, Qt::Key(Qt::Key_1 + index), Qt::ControlModifier);  // the rail's shortcuts
  } else {
    w->setProperty("currentPage", index);  // what a click on the rail sets
  }
  waitUntil([&] { return w->property("currentPage").toInt() == index; }, 2000);
}

QQuickItem* Walker::delegateAt(int row) {
  QQuickItem* list = findItem(m_app.page(QStringLiteral("chat")), QStringLiteral("messageList"));
  if (!list) return nullptr;
  // `row` counts messages oldest first (ChatController::messages()); the list shows them newest first.
  const int count = list->property("count").toInt();
  if (row < 0 || row >= count) return nullptr;
  row = count - 1 - row;
  // Scrolled into view first, as the user would: a ListView makes delegates for visible rows only.
  QJSEngine* js = qjsEngine(list);
  if (!js) return nullptr;
  const QJSValue self = js->toScriptValue<QObject*>(list);
  self.property(QStringLiteral("positionViewAtIndex")).callWithInstance(self, {row, 2 /* ListView.Contain */});
  QQuickItem* item = nullptr;
  QMetaObject::invokeMethod(list, "itemAtIndex", Q_RETURN_ARG(QQuickItem*, item), Q_ARG(int, row));
  return item;
}

bool Walker::send(const QString& text) {
  ChatController* chat = m_app.chat();
  if (m_filledChats.contains(chat->currentChatId())) {
    if (m_config.skipFullContextFollowUp) {
      m_log.add(QStringLiteral("  (WB_SOAK_SKIP_FULL_CONTEXT_FOLLOWUP: a new chat instead)"));
      chat->newChat();
    } else {
      ++m_result.fullContextFollowUps;
      m_log.add(QStringLiteral("  a message after a reply that filled the whole context"));
    }
  }
  m_filledChats.remove(chat->currentChatId());
  const int before = chat->messages()->rowCount();
  // ChatPage.send(): what the composer's Enter and send button call. Its own time (the controller, the
  // store, the models' signals and what the views do at once) and the next frame's (the views' polish:
  // delegates made and laid out) are noted when long, to tell the two apart in a stall.
  bool rendered = false;
  const QMetaObject::Connection frame =
      QObject::connect(m_app.window(), &QQuickWindow::afterRendering, m_app.window(), [&] { rendered = true; },
                       Qt::DirectConnection);
  QElapsedTimer call;
  call.start();
  QMetaObject::invokeMethod(m_app.page(QStringLiteral("chat")), "send", Q_ARG(QVariant, text));
  const qint64 callMs = call.restart();
  waitUntil([&] { return rendered; }, 3000);
  const qint64 frameMs = call.elapsed();
  QObject::disconnect(frame);
  if (callMs + frameMs > 50)
    m_log.add(QStringLiteral("  send of %1 characters: %2 ms in ChatPage.send(), %3 ms to the next frame")
                  .arg(text.size())
                  .arg(callMs)
                  .arg(frameMs));
  return chat->messages()->rowCount() > before;
}

// ---- the actions -----------------------------------------------------------------------------------

void Walker::defineActions() {
  m_actions = {
      {QStringLiteral("newChat"), 6, [this] { newChat(); }},
      {QStringLiteral("sendShort"), 16, [this] { sendShort(); }},
      {QStringLiteral("sendLong"), 4, [this] { sendLong(); }},
      {QStringLiteral("sendFillingContext"), 5, [this] { sendFillingContext(); }},
      {QStringLiteral("regenerate"), 7, [this] { regenerate(); }},
      {QStringLiteral("edit"), 6, [this] { edit(); }},
      {QStringLiteral("switchBranch"), 6, [this] { switchBranch(); }},
      {QStringLiteral("stopMidReply"), 7, [this] { stopMidReply(); }},
      {QStringLiteral("continueReply"), 3, [this] { continueReply(); }},
      {QStringLiteral("compare"), 4, [this] { compareReply(); }},
      {QStringLiteral("pickA"), 3, [this] { pickComparison(QStringLiteral("A")); }},
      {QStringLiteral("pickB"), 3, [this] { pickComparison(QStringLiteral("B")); }},
      {QStringLiteral("cancelCompare"), 2, [this] { cancelComparison(); }},
      {QStringLiteral("deleteMessage"), 4, [this] { deleteMessageMaybeUndo(); }},
      {QStringLiteral("deleteChat"), 3, [this] { deleteChatMaybeUndo(); }},
      {QStringLiteral("search"), 4, [this] { search(); }},
      {QStringLiteral("switchPage"), 7, [this] { switchPage(); }},
      {QStringLiteral("showChatPage"), 2, [this] { showPage(0); }},
      {QStringLiteral("switchTheme"), 3, [this] { switchTheme(); }},
      {QStringLiteral("inspectMessage"), 4, [this] { inspectMessage(); }},
      {QStringLiteral("trainAndCancel"), 2, [this] { trainAndCancel(); }},
      {QStringLiteral("loadModelMidGeneration"), 2, [this] { loadModelMidGeneration(); }},
      {QStringLiteral("selectOtherChat"), 4, [this] { selectOtherChat(); }},
      {QStringLiteral("reopenDatabase"), 1, [this] { reopenDatabase(); }},
      // Weight 0: only fixed sequences name them (sendLong already reaches 6000 words in the walk).
      {QStringLiteral("sendVeryLong"), 0, [this] { sendVeryLong(); }},
      {QStringLiteral("importManyChats"), 0, [this] { importManyChats(); }},
  };
}

void Walker::newChat() {
  if (chance(0.5) && m_app.window()->property("currentPage").toInt() == 0) {
    m_app.window()->requestActivate();
    QTest::keyClick(m_app.window(), Qt::Key_N, Qt::ControlModifier);
  } else {
    m_app.chat()->newChat();  // the sidebar's New chat button
  }
}

void Walker::sendShort() {
  if (!maybeWaitIdle()) return;
  setMaxTokens(uniform(1, 48));
  send(words(uniform(1, 12)));
  if (chance(0.7)) waitForReply(QStringLiteral("sendShort"));
}

void Walker::sendLong() {
  if (!maybeWaitIdle()) return;
  setMaxTokens(uniform(1, 24));
  // From a paragraph to far past any context: the app must refuse or trim, not stall.
  send(words(uniform(200, chance(0.3) ? 6000 : 1200)));
  waitForReply(QStringLiteral("sendLong"));
}

void Walker::sendVeryLong() {
  if (!waitIdle(QStringLiteral("sendVeryLong"))) return;
  setMaxTokens(uniform(1, 24));
  send(words(6000));
  waitForReply(QStringLiteral("sendVeryLong"));
}

// Forty chats through the sidebar's Import, each a question and a long answer: a sidebar that
// scrolls, and a database that is not empty.
void Walker::importManyChats() {
  const QString path = QDir(m_config.dir).filePath(QStringLiteral("import.json"));
  for (int i = 0; i < 40; ++i) {
    const QString json =
        QStringLiteral(R"({"title": "Imported %1", "messages": [{"role": "user", "content": "%2"},)"
                       R"( {"role": "assistant", "content": "%3"}]})")
            .arg(i)
            .arg(words(uniform(3, 20)).remove(QLatin1Char('\n')), words(uniform(100, 600)).remove(QLatin1Char('\n')));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return fail(QStringLiteral("importManyChats: ") + path);
    file.write(json.toUtf8());
    file.close();
    const QString error = m_app.chat()->importJson(path);
    if (!error.isEmpty()) return fail(QStringLiteral("importManyChats: ") + error);
    QTest::qWait(30);  // one import after another, as a user would: each is its own stall if any
  }
}

void Walker::sendFillingContext() {
  if (!waitIdle(QStringLiteral("sendFillingContext"))) return;
  ChatController* chat = m_app.chat();
  if (chance(0.5)) chat->newChat();
  // Replies allowed up to the model's whole context, and the starter model's end-of-reply tokens banned
  // (the sampling popup's logit bias), so that the reply does fill it.
  setMaxTokens(m_app.app()->modelContextLength(), m_onStarter ? replyEndBan(kStarterModel) : QString());
  if (send(QStringLiteral("Once upon a time"))) waitForReply(QStringLiteral("sendFillingContext"));
}

void Walker::regenerate() {
  if (!maybeWaitIdle()) return;
  const QList<ChatMessageModel::Row> r = rows();
  if (r.isEmpty()) return;
  const int row = chance(0.7) ? int(r.size()) - 1 : uniform(0, int(r.size()) - 1);
  setMaxTokens(uniform(1, 40));
  m_filledChats.remove(m_app.chat()->currentChatId());
  if (QQuickItem* d = delegateAt(row))
    QMetaObject::invokeMethod(d, "regenerateRequested", Q_ARG(QVariant, QVariant(r[row].message.id)));
  else m_app.chat()->regenerate(r[row].message.id);
  if (chance(0.6)) waitForReply(QStringLiteral("regenerate"));
}

void Walker::edit() {
  if (!maybeWaitIdle()) return;
  const QList<ChatMessageModel::Row> r = rows();
  if (r.isEmpty()) return;
  const int row = uniform(0, int(r.size()) - 1);
  setMaxTokens(uniform(1, 32));
  const QString text = words(uniform(1, 20));
  if (QQuickItem* d = delegateAt(row))
    QMetaObject::invokeMethod(d, "editSubmitted", Q_ARG(QVariant, QVariant(r[row].message.id)), Q_ARG(QString, text));
  else m_app.chat()->editMessage(r[row].message.id, text);
  if (chance(0.6)) waitForReply(QStringLiteral("edit"));
}

void Walker::switchBranch() {
  if (!maybeWaitIdle()) return;
  QList<int> branched;
  const QList<ChatMessageModel::Row> r = rows();
  for (int i = 0; i < r.size(); ++i)
    if (r[i].siblingCount > 1) branched << i;
  if (branched.isEmpty()) return;
  const int row = branched[uniform(0, int(branched.size()) - 1)];
  const int delta = chance(0.5) ? -1 : 1;
  if (QQuickItem* d = delegateAt(row))
    QMetaObject::invokeMethod(d, "siblingRequested", Q_ARG(QVariant, QVariant(r[row].message.id)), Q_ARG(int, delta));
  else m_app.chat()->switchSibling(r[row].message.id, delta);
}

void Walker::stopMidReply() {
  if (!waitIdle(QStringLiteral("stopMidReply"))) return;
  setMaxTokens(m_app.app()->modelContextLength());
  if (!send(words(uniform(2, 8)))) return;
  QTest::qWait(uniform(0, 1500));
  const bool onChat = m_app.window()->property("currentPage").toInt() == 0;
  if (onChat && chance(0.5)) {
    m_app.window()->requestActivate();
    QTest::keyClick(m_app.window(), Qt::Key_Escape);  // the page's Esc shortcut
  } else if (QQuickItem* stop =
                 onChat ? findItem(m_app.page(QStringLiteral("chat")), QStringLiteral("stopButton")) : nullptr) {
    QMetaObject::invokeMethod(stop, "clicked");
  } else {
    m_app.chat()->stop();
  }
  waitForReply(QStringLiteral("stopMidReply"), 60000);
}

void Walker::continueReply() {
  if (!maybeWaitIdle()) return;
  const QList<ChatMessageModel::Row> r = rows();
  if (r.isEmpty() || r.last().message.role != QLatin1String("assistant")) return;
  setMaxTokens(uniform(1, 32));
  if (QQuickItem* d = delegateAt(int(r.size()) - 1))
    QMetaObject::invokeMethod(d, "continueRequested", Q_ARG(QVariant, QVariant(r.last().message.id)));
  else m_app.chat()->continueReply(r.last().message.id);
  waitForReply(QStringLiteral("continueReply"));
}

void Walker::compareReply() {
  if (!maybeWaitIdle()) return;
  ChatController* chat = m_app.chat();
  const QList<ChatMessageModel::Row> r = rows();
  if (chat->comparing() || r.isEmpty() || r.last().message.role != QLatin1String("assistant")) return;
  setMaxTokens(uniform(1, 32));
  const qint64 id = r.last().message.id;
  const int pairs = m_app.app()->preferences()->count();
  const QString original = r.last().message.content;
  if (m_app.window()->property("currentPage").toInt() == 0 && chance(0.5)) {
    m_app.window()->requestActivate();
    QTest::keyClick(m_app.window(), Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);  // the page's shortcut
  } else if (QQuickItem* d = delegateAt(int(r.size()) - 1)) {
    QMetaObject::invokeMethod(d, "compareRequested", Q_ARG(QVariant, QVariant(id)));
  } else {
    chat->compareReply(id);
  }
  if (!chat->comparing()) return;  // refused (an incomplete reply, a busy engine...): lastError says why
  // A reply still being written when the walk read it may have ended while the shortcut's events ran, and
  // only then been compared: the comparison's original is that reply's stored text at this moment.
  QString stored = original;
  for (const ChatMessageModel::Row& row : rows())
    if (row.message.id == id) stored = row.message.content;
  ++m_result.comparisons;
  m_compareReplyId = id;
  m_compareOriginal = stored;
  m_pairsBeforeCompare = pairs;
  if (chat->compareMessageId() != id || chat->compareOriginal() != stored)
    fail(QStringLiteral("compare: the comparison is of message %1, not the last reply %2")
             .arg(chat->compareMessageId())
             .arg(id));
  // Usually B is written to the end; otherwise the pick or dismissal meets it still being written.
  if (chance(0.7)) waitForReply(QStringLiteral("compare"));
  // Often picked at once, as a user comparing does; otherwise left open for the next actions (which the
  // chat refuses, or which close it: another chat, a reopen).
  if (chance(0.4)) pickComparison(chance(0.5) ? QStringLiteral("A") : QStringLiteral("B"));
}

void Walker::pickComparison(const QString& side) {
  ChatController* chat = m_app.chat();
  if (!chat->comparing()) return;
  if (chat->compareWriting()) {
    if (chance(0.3)) chat->stop();  // the panel's Stop: B as written so far
    if (!waitForReply(QStringLiteral("pick")) || !chat->comparing()) return;
  }
  const qint64 id = chat->compareMessageId();
  const QString chosen = side == QLatin1String("A") ? chat->compareOriginal() : chat->compareAlternative();
  const int pairs = m_app.app()->preferences()->count();
  // The kept reply's text changes in place: the ledger gives up the old text before the pick.
  recordGone(QStringLiteral("id = %1").arg(id));
  QQuickItem* panel = findItem(m_app.page(QStringLiteral("chat")), QStringLiteral("comparePanel"));
  // The panel's buttons and shortcuts are there once both replies have text; the controller says why not.
  const bool canPick = panel && panel->property("canPick").toBool();
  const bool onChat = m_app.window()->property("currentPage").toInt() == 0;
  if (!canPick) {
    chat->keepComparison(side);
  } else if (onChat && chance(0.5)) {
    m_app.window()->requestActivate();
    QTest::keyClick(m_app.window(), side == QLatin1String("A") ? Qt::Key_A : Qt::Key_B,
                    Qt::ControlModifier | Qt::ShiftModifier);
  } else {
    QMetaObject::invokeMethod(panel, "keep", Q_ARG(QVariant, side));  // the "A/B is better" buttons
  }
  if (chat->comparing()) {
    // Refused (B empty or the same as A): said, and nothing saved.
    if (chat->lastError().isEmpty()) fail(QStringLiteral("pick %1: refused without a word").arg(side));
    if (m_app.app()->preferences()->count() != pairs)
      fail(QStringLiteral("pick %1: refused, yet a pair was saved").arg(side));
    return;
  }
  m_log.add(QStringLiteral("  kept %1").arg(side));
  ++m_result.picks;
  if (m_app.app()->preferences()->count() != pairs + 1)
    fail(QStringLiteral("pick %1: %2 pairs after, %3 before")
             .arg(side)
             .arg(m_app.app()->preferences()->count())
             .arg(pairs));
  const StoredMessage kept = chat->store()->message(id);
  if (kept.content != chosen || !kept.complete)
    fail(QStringLiteral("pick %1: message %2 holds '%3', not the reply kept")
             .arg(side)
             .arg(id)
             .arg(kept.content.left(40)));
  m_compareReplyId = 0;
}

void Walker::cancelComparison() {
  ChatController* chat = m_app.chat();
  if (!chat->comparing()) return;
  const qint64 id = chat->compareMessageId();
  const int pairs = m_app.app()->preferences()->count();
  const bool onChat = m_app.window()->property("currentPage").toInt() == 0;
  if (onChat && !chat->generating() && chance(0.5)) {
    m_app.window()->requestActivate();
    QTest::keyClick(m_app.window(), Qt::Key_Escape);  // the page's Esc: dismisses once B is written
  } else if (QQuickItem* dismiss = onChat ? findItem(m_app.page(QStringLiteral("chat")),
                                                     QStringLiteral("dismissCompareButton"))
                                          : nullptr) {
    QMetaObject::invokeMethod(dismiss, "clicked");
  } else {
    chat->dismissComparison();
  }
  if (chat->comparing()) return fail(QStringLiteral("cancelCompare: the comparison is still open"));
  waitForReply(QStringLiteral("cancelCompare"));  // a B still being written stops
  if (m_app.app()->preferences()->count() != pairs) fail(QStringLiteral("cancelCompare: a pair was saved"));
  const StoredMessage reply = chat->store()->message(id);
  if (id == m_compareReplyId && reply.id && reply.content != m_compareOriginal)
    fail(QStringLiteral("cancelCompare: message %1 changed").arg(id));
  m_compareReplyId = 0;
}

void Walker::deleteMessageMaybeUndo() {
  if (!maybeWaitIdle()) return;
  const QList<ChatMessageModel::Row> r = rows();
  if (r.isEmpty()) return;
  const int row = uniform(0, int(r.size()) - 1);
  const qint64 id = r[row].message.id;
  // The message and every reply below it, as the store deletes them.
  if (!m_app.chat()->generating())
    recordGone(QStringLiteral("id IN (WITH RECURSIVE sub(id) AS (SELECT %1 UNION ALL SELECT m.id FROM messages m "
                              "JOIN sub ON m.parent_id = sub.id) SELECT id FROM sub)")
                   .arg(id));
  if (QQuickItem* d = delegateAt(row)) QMetaObject::invokeMethod(d, "deleteRequested", Q_ARG(QVariant, QVariant(id)));
  else m_app.chat()->deleteMessage(id);
  if (chance(0.5)) {
    QTest::qWait(uniform(0, 300));
    QMetaObject::invokeMethod(m_app.page(QStringLiteral("chat")), "undoDelete");  // the banner's Undo, Ctrl+Z
    m_log.add(QStringLiteral("  undo"));
  }
}

void Walker::deleteChatMaybeUndo() {
  if (!maybeWaitIdle()) return;
  ChatController* chat = m_app.chat();
  const qint64 id = chat->currentChatId();
  if (!id || chat->generating()) return;
  recordGone(QStringLiteral("chat_id = %1").arg(id));
  chat->deleteChat(id);  // the sidebar menu's Delete
  if (chance(0.5)) {
    QTest::qWait(uniform(0, 300));
    QMetaObject::invokeMethod(m_app.page(QStringLiteral("chat")), "undoDelete");
    m_log.add(QStringLiteral("  undo"));
  } else if (chance(0.5)) {
    chat->finalizeDelete();  // the banner's timeout
  }
}

void Walker::search() {
  QQuickItem* field = findItem(m_app.page(QStringLiteral("chat")), QStringLiteral("chatSearchField"));
  if (!field) return fail(QStringLiteral("no chatSearchField"));
  static const char* const kQueries[] = {"boat", "story", "quetzal", "w1", "café", "\"", "*", "日本", "a b c", "OR"};
  const QString text = QString::fromUtf8(kQueries[uniform(0, int(std::size(kQueries)) - 1)]);
  field->setProperty("text", text);
  waitUntil([&] { return m_app.chat()->searchText() == text; }, 3000);
  ChatListModel* list = m_app.chat()->chats();
  if (list->rowCount() > 0 && chance(0.6) && !m_app.chat()->generating()) {
    const QModelIndex hit = list->index(uniform(0, list->rowCount() - 1));
    m_app.chat()->openSearchHit(list->data(hit, ChatListModel::ChatIdRole).toLongLong(),
                                list->data(hit, ChatListModel::MessageIdRole).toLongLong());
  }
  QTest::qWait(uniform(0, 200));
  field->setProperty("text", QString());
  waitUntil([&] { return m_app.chat()->searchText().isEmpty(); }, 3000);
}

// The Chat page is where most actions show their effect, so it is visited most.
void Walker::switchPage() { showPage(chance(0.4) ? 0 : uniform(0, 7)); }

void Walker::switchTheme() {
  AppSettings* s = m_app.app()->settings();
  s->setTheme(s->theme() == QLatin1String("dark") ? QStringLiteral("light") : QStringLiteral("dark"));
}

void Walker::inspectMessage() {
  if (!maybeWaitIdle()) return;
  const QList<ChatMessageModel::Row> r = rows();
  if (r.isEmpty()) return;
  const int row = uniform(0, int(r.size()) - 1);
  if (QQuickItem* d = delegateAt(row)) {
    QMetaObject::invokeMethod(d, "inspectRequested", Q_ARG(QVariant, QVariant(r[row].message.id)));
  } else if (m_app.chat()->inspectMessage(r[row].message.id)) {
    showPage(2);
  }
  if (!waitUntil([&] { return !m_app.app()->inspecting(); }, 120000))
    fail(QStringLiteral("inspectMessage: the inspection did not end within 120 s"));
}

void Walker::trainAndCancel() {
  TrainingJobs* jobs = m_app.app()->training();
  if (jobs->busy()) return;
  const QVariantMap settings{{QStringLiteral("recipe"), QStringLiteral("pretrain")},
                             {QStringLiteral("model"), m_tinyModel},
                             {QStringLiteral("data"), m_trainData},
                             {QStringLiteral("steps"), 200},
                             {QStringLiteral("batch"), 2},
                             {QStringLiteral("seq"), 32},
                             {QStringLiteral("val_every"), 0},
                             {QStringLiteral("threads"), 1}};
  // What the wizard's Start does (TrainPage: App.training.enqueue), and the dashboard's Cancel.
  const qint64 id = jobs->enqueue(QStringLiteral("soak-%1").arg(m_result.actions), settings);
  if (!id) return fail(QStringLiteral("trainAndCancel: the run was not stored"));
  if (chance(0.5)) showPage(3);
  QTest::qWait(uniform(0, 2000));
  jobs->cancel(id);
  if (!waitUntil([&] { return !jobs->busy(); }, 60000))
    return fail(QStringLiteral("trainAndCancel: run %1 still busy 60 s after cancel").arg(id));
  const QString status = jobs->store()->run(id).status;
  m_log.add(QStringLiteral("  run %1 %2").arg(id).arg(status));
  if (status == QLatin1String("running") || status == QLatin1String("queued"))
    fail(QStringLiteral("trainAndCancel: run %1 left '%2'").arg(id).arg(status));
}

void Walker::loadModelMidGeneration() {
  if (!waitIdle(QStringLiteral("loadModelMidGeneration"))) return;
  setMaxTokens(m_app.app()->modelContextLength());
  send(words(uniform(2, 6)));
  QTest::qWait(uniform(0, 800));
  // The Models page's Open (or a recent model's entry): the other of the starter and the tiny model.
  const QString next = m_onStarter ? m_tinyModel : kStarterModel;
  m_log.add(
      QStringLiteral("  open %1 while generating=%2").arg(QFileInfo(next).fileName()).arg(m_app.chat()->generating()));
  m_app.app()->openModel(next);
  if (!waitIdle(QStringLiteral("loadModelMidGeneration"))) return;
  if (!m_app.app()->hasModel() || !m_app.app()->lastError().isEmpty())
    return fail(QStringLiteral("loadModelMidGeneration: %1").arg(m_app.app()->lastError()));
  m_onStarter = !m_onStarter;
}

void Walker::selectOtherChat() {
  ChatListModel* list = m_app.chat()->chats();
  if (list->rowCount() == 0) return;
  // A click in the sidebar selects the chat (also while a reply streams in another).
  m_app.chat()->selectChat(
      list->data(list->index(uniform(0, list->rowCount() - 1)), ChatListModel::ChatIdRole).toLongLong());
}

void Walker::reopenDatabase() {
  // Quit and start again on the same file, sometimes while a reply is being written.
  const QList<ChatMessageModel::Row> r = rows();
  if (m_app.chat()->generating())
    for (const ChatMessageModel::Row& row : r)
      if (row.streaming || !row.message.complete) m_interrupted.insert(row.message.id);
  m_heartbeat->pause();
  m_app.close();
  m_filledChats.clear();
  checkpoint(QStringLiteral("closed"));
  ++m_result.reopens;
  const bool opened = openApp();
  if (opened && m_app.chat()->storageProblem().size())
    fail(QStringLiteral("reopen: storage problem '%1'").arg(m_app.chat()->storageProblem()));
}

// ---- checks ----------------------------------------------------------------------------------------

void Walker::checkpoint(const QString& where) {
  ++m_result.checkpoints;
  m_heartbeat->pause();
  const QString problems = databaseProblems(m_db);
  if (!problems.isEmpty()) fail(QStringLiteral("database at %1: %2").arg(where, problems));
  // With no reply in flight, every reply is complete, unless a reopen cut it off.
  const bool replyInFlight = m_app.isOpen() && m_app.chat()->generating();
  if (!replyInFlight) {
    for (const QString& id : sqlRows(m_db, QStringLiteral("SELECT id FROM messages WHERE complete = 0")))
      if (!m_interrupted.contains(id.toLongLong()))
        fail(QStringLiteral("at %1: message %2 is stored incomplete with no reply in flight").arg(where, id));
  }
  m_heartbeat->resume();
}

// Kill mode: every message the chat view shows as complete is one the user has seen saved.
void Walker::recordSaved() {
  if (!m_config.printLedger || !m_app.isOpen()) return;
  for (const ChatMessageModel::Row& row : rows()) {
    if (row.streaming || !row.message.complete) continue;
    const StoredMessage m = m_app.chat()->store()->message(row.message.id);
    if (m.id == 0 || !m.complete) continue;
    const QString entry = QStringLiteral("%1 %2").arg(m.content.size()).arg(contentHash(m.content));
    if (m_ledger.value(m.id) == entry) continue;
    m_ledger.insert(m.id, entry);
    std::printf("saved %lld %s\n", qlonglong(m.id), qPrintable(entry));
  }
  std::fflush(stdout);
}

void Walker::recordGone(const QString& sqlWhere) {
  if (!m_config.printLedger) return;
  for (const QString& id : sqlRows(m_db, QStringLiteral("SELECT id FROM messages WHERE ") + sqlWhere)) {
    m_ledger.remove(id.toLongLong());
    std::printf("gone %s\n", qPrintable(id));  // before the delete: a kill just after must not count it
  }
  std::fflush(stdout);
}

void Walker::runAction(const Action& action) {
  ++m_result.actions;
  // A reply that ended inside the last action's own waits has its store check queued: it runs now, before this
  // action can delete, continue or rewrite that reply.
  QTest::qWait(0);
  m_log.add(QStringLiteral("%1 [chat %2, page %3, %4 rows%5]")
                .arg(action.name)
                .arg(m_app.chat()->currentChatId())
                .arg(m_app.window()->property("currentPage").toInt())
                .arg(m_app.chat()->messages()->rowCount())
                .arg(m_app.chat()->generating() ? QStringLiteral(", generating") : QString()));
  action.run();
  recordSaved();
}

bool Walker::run(Heartbeat* heartbeat) {
  m_heartbeat = heartbeat;
  if (!prepare() || !openApp()) return false;
  if (m_config.printLedger) {
    std::printf("ready\n");
    std::fflush(stdout);
  }
  int totalWeight = 0;
  for (const Action& a : m_actions) totalWeight += a.weight;
  QElapsedTimer clock, sinceCheckpoint;
  clock.start();
  sinceCheckpoint.start();
  while (clock.elapsed() < m_config.seconds * 1000 && m_result.failures.isEmpty()) {
    int pick = uniform(0, totalWeight - 1);
    const Action* action = &m_actions.first();
    for (const Action& a : m_actions) {
      if (pick < a.weight) {
        action = &a;
        break;
      }
      pick -= a.weight;
    }
    runAction(*action);
    if (sinceCheckpoint.elapsed() > 20000) {
      checkpoint(QStringLiteral("periodic"));
      sinceCheckpoint.restart();
    }
  }
  if (m_result.failures.isEmpty()) waitIdle(QStringLiteral("the end"));
  recordSaved();
  checkpoint(QStringLiteral("the end"));
  if (!m_app.warnings().isEmpty()) m_log.add(QStringLiteral("QML warnings:\n") + m_app.warnings().join('\n'));
  return true;
}

bool Walker::replay(const QStringList& actions, Heartbeat* heartbeat) {
  m_heartbeat = heartbeat;
  if (!prepare() || !openApp()) return false;
  for (const QString& name : actions) {
    auto it = std::find_if(m_actions.begin(), m_actions.end(), [&](const Action& a) { return a.name == name; });
    if (it == m_actions.end()) {
      fail(QStringLiteral("no action named ") + name);
      break;
    }
    runAction(*it);
    if (!m_result.failures.isEmpty()) break;
  }
  if (m_result.failures.isEmpty()) waitIdle(QStringLiteral("the end"));
  checkpoint(QStringLiteral("the end"));
  return true;
}
