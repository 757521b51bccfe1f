// Registers app-core types (which know nothing of QML) with the Workbench.Ui module.
//
// `App` is the AppController that main.cpp creates and owns; QML gets that same object, never a
// copy, and the engine is told not to delete it. AppSettings is reachable only as App.settings.
#pragma once

#include <QObject>
#include <QtQml/qqml.h>

#include "services/appcontroller.h"
#include "services/appsettings.h"
#include "services/chatcontroller.h"
#include "services/preferencepairs.h"
#include "services/rewardscorer.h"
#include "services/serverrequestlog.h"
#include "services/serverservice.h"

class QQmlEngine;
class QJSEngine;

struct AppControllerForeign {
  Q_GADGET
  QML_FOREIGN(AppController)
  QML_NAMED_ELEMENT(App)
  QML_SINGLETON

 public:
  // Call before the first QML engine loads anything that uses `App`.
  static void setInstance(AppController* controller);
  static AppController* create(QQmlEngine* qmlEngine, QJSEngine* jsEngine);

 private:
  static inline AppController* s_instance = nullptr;
};

struct AppSettingsForeign {
  Q_GADGET
  QML_FOREIGN(AppSettings)
  QML_NAMED_ELEMENT(AppSettings)
  QML_UNCREATABLE("AppSettings is reached through App.settings")
};

// The Chat page's controller and models, reached as App.chat, App.chat.chats and App.chat.messages.
struct ChatControllerForeign {
  Q_GADGET
  QML_FOREIGN(ChatController)
  QML_NAMED_ELEMENT(ChatController)
  QML_UNCREATABLE("ChatController is reached through App.chat")
};

struct ChatListModelForeign {
  Q_GADGET
  QML_FOREIGN(ChatListModel)
  QML_NAMED_ELEMENT(ChatListModel)
  QML_UNCREATABLE("ChatListModel is reached through App.chat.chats")
};

struct ChatMessageModelForeign {
  Q_GADGET
  QML_FOREIGN(ChatMessageModel)
  QML_NAMED_ELEMENT(ChatMessageModel)
  QML_UNCREATABLE("ChatMessageModel is reached through App.chat.messages")
};

struct TrainingJobsForeign {
  Q_GADGET
  QML_FOREIGN(TrainingJobs)
  QML_NAMED_ELEMENT(TrainingJobs)
  QML_UNCREATABLE("TrainingJobs is reached through App.training")
};

struct PreferencePairsForeign {
  Q_GADGET
  QML_FOREIGN(PreferencePairs)
  QML_NAMED_ELEMENT(PreferencePairs)
  QML_UNCREATABLE("PreferencePairs is reached through App.preferences")
};

struct RewardScorerForeign {
  Q_GADGET
  QML_FOREIGN(RewardScorer)
  QML_NAMED_ELEMENT(RewardScorer)
  QML_UNCREATABLE("RewardScorer is reached through App.rewards")
};

// The Server page's service and its request log, reached as App.server and App.server.requestLog.
struct ServerServiceForeign {
  Q_GADGET
  QML_FOREIGN(ServerService)
  QML_NAMED_ELEMENT(ServerService)
  QML_UNCREATABLE("ServerService is reached through App.server")
};

struct ServerRequestLogForeign {
  Q_GADGET
  QML_FOREIGN(ServerRequestLog)
  QML_NAMED_ELEMENT(ServerRequestLog)
  QML_UNCREATABLE("ServerRequestLog is reached through App.server.requestLog")
};
