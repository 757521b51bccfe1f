// Registers app-core types (which know nothing of QML) with the Workbench.Ui module.
//
// `App` is the AppController that main.cpp creates and owns; QML gets that same object, never a
// copy, and the engine is told not to delete it. AppSettings is reachable only as App.settings.
#pragma once

#include <QObject>
#include <QtQml/qqml.h>

#include "services/appcontroller.h"
#include "services/appsettings.h"

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

struct TrainingJobsForeign {
  Q_GADGET
  QML_FOREIGN(TrainingJobs)
  QML_NAMED_ELEMENT(TrainingJobs)
  QML_UNCREATABLE("TrainingJobs is reached through App.training")
};
