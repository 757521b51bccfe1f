// Test hooks of the desktop app (see testhooks.h).
#include "testhooks.h"

#include <QCoreApplication>
#include <QMetaObject>

#include <cstdio>
#include <memory>

#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "services/appcontroller.h"
#include "services/chatcontroller.h"
#include "services/logitbias.h"
#include "services/store/chatstore.h"
#include "services/store/database.h"

namespace {

void installAutosend(AppController& app, const QString& text) {
  ChatController* chat = app.chat();
  auto sendOne = [&app, chat, text] {
    if (!app.hasModel() || chat->generating()) return;
    chat->newChat();
    chat->send(text);
  };
  QObject::connect(&app, &AppController::modelChanged, chat, [&app, chat, sendOne] {
    // The end of a reply banned too, so that every reply runs for seconds (a kill test needs one in
    // flight, and a chat model's one-sentence answer is over before it is ever flushed).
    QString ban;
    try {
      ban = endOfReplyBan(*engine::load_model_tokenizer(app.modelPath().toStdString()));
    } catch (const std::exception&) {
      // A model without a tokenizer cannot chat; the send below reports that.
    }
    chat->setGenerationSettings({{QStringLiteral("maxTokens"), app.modelContextLength()},
                                 {QStringLiteral("logitBias"), ban}});
    sendOne();
  });
  // Queued: the next send starts after the finished reply's handlers have all run. A failed reply
  // stops the loop (it would fail again at once, forever).
  QObject::connect(chat, &ChatController::replyFinished, chat, [chat, sendOne](qint64, const QString& error) {
    if (error.isEmpty()) QMetaObject::invokeMethod(chat, sendOne, Qt::QueuedConnection);
  });
}

void installQuitWhenReady(AppController& app) {
  auto reported = std::make_shared<bool>(false);  // shared by both connections below
  auto reportOnce = [&app, reported] {
    if (app.loading() || *reported) return;
    *reported = true;
    std::printf("ready model=%s chats=%d problem=%s\n", qPrintable(app.modelName()),
                int(app.chat()->store()->chats().size()), qPrintable(app.database()->problem()));
    std::fflush(stdout);
    QCoreApplication::quit();
  };
  QObject::connect(&app, &AppController::loadingChanged, &app, reportOnce);
  // Also when no model is loaded at all (start() found none): then loading never changes.
  QMetaObject::invokeMethod(&app, reportOnce, Qt::QueuedConnection);
}

}  // namespace

void installTestHooks(AppController& controller) {
  const QString autosend = qEnvironmentVariable("WB_TEST_AUTOSEND");
  if (!autosend.isEmpty()) installAutosend(controller, autosend);
  if (qEnvironmentVariableIntValue("WB_TEST_QUIT_WHEN_READY") == 1) installQuitWhenReady(controller);
}
