// The `App` singleton factory.
#include "appsingleton.h"

#include <QJSEngine>
#include <QQmlEngine>

void AppControllerForeign::setInstance(AppController* controller) { s_instance = controller; }

AppController* AppControllerForeign::create(QQmlEngine*, QJSEngine* jsEngine) {
  Q_ASSERT_X(s_instance, "App singleton", "AppControllerForeign::setInstance() must run before QML loads");
  // One object shared by every engine (the app has one, a test may have several in sequence).
  QJSEngine::setObjectOwnership(s_instance, QJSEngine::CppOwnership);
  Q_UNUSED(jsEngine);
  return s_instance;
}
