// Qt Quick Test runner for the QML TestCases in tests/ui/quick/, against the real Workbench.Ui
// module (the static plugin) and a real AppController behind its `App` singleton (the module's
// Style reads the theme from it), on a throwaway session database.
#include <QQmlEngine>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest>

#include <memory>

#include "appsingleton.h"
#include "services/appcontroller.h"
#include "support/quick_test_env.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

class Setup : public QObject {
  Q_OBJECT

 public Q_SLOTS:
  void applicationAvailable() {
    prepareQuickTestEnvironment(m_dir);
    m_controller = std::make_unique<AppController>();
    AppControllerForeign::setInstance(m_controller.get());
  }
  void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/qt/qml")); }
  void cleanupTestCase() { m_controller.reset(); }

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<AppController> m_controller;
};

QUICK_TEST_MAIN_WITH_SETUP(chat_quick, Setup)

#include "test_chat_quick.moc"
