// llm-workbench: the desktop app. A thin shell: parse the command line, create the controller (which
// starts the engine thread), load the QML UI, open the startup model, and on quit join the engine
// thread before anything global is torn down.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QScreen>
#include <QUrl>
#include <QtQml/qqmlextensionplugin.h>

#include <memory>

#include "appsingleton.h"
#include "engine/blas_core.h"
#include "services/appcontroller.h"
#include "services/appsettings.h"
#include "testhooks.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

namespace {

// Restores the last window placement, unless the screens changed so that it would be off-screen.
void restoreGeometry(QQuickWindow* window, const AppSettings& settings) {
  const QRect saved = settings.windowGeometry();
  if (saved.isValid()) {
    for (const QScreen* screen : QGuiApplication::screens()) {
      if (screen->availableGeometry().intersects(saved)) {
        window->setGeometry(saved);
        break;
      }
    }
  }
  if (settings.windowMaximized()) window->showMaximized();
}

}  // namespace

int main(int argc, char* argv[]) {
  engine::restart_with_better_blas_core(argv);  // before anything else: it may replace the process
  // Qt Charts in QML needs a QApplication (widgets-based graphics scene), not a QGuiApplication.
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("LLM Workbench"));
  QApplication::setOrganizationDomain(QStringLiteral("llmworkbench.github.io"));
  QApplication::setApplicationName(QStringLiteral("llm-workbench"));
  QApplication::setApplicationDisplayName(QStringLiteral("LLM Workbench"));
  QApplication::setApplicationVersion(QStringLiteral(WB_VERSION));
  QApplication::setDesktopFileName(QStringLiteral("llm-workbench"));
  QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("llm-workbench")));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Run, inspect, fine-tune and align language models on your own machine."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption modelOption(QStringList{QStringLiteral("m"), QStringLiteral("model")},
                                       QStringLiteral("Open the model at PATH (a GGUF file, a Hugging Face folder, a "
                                                      ".safetensors file or an llm.c .bin checkpoint)."),
                                       QStringLiteral("PATH"));
  parser.addOption(modelOption);
  parser.process(app);

  // One consistent look on every desktop; Material also gives a real dark theme.
  QQuickStyle::setStyle(QStringLiteral("Material"));

  auto controller = std::make_unique<AppController>();
  AppControllerForeign::setInstance(controller.get());

  QQmlApplicationEngine engine;
  // Qt 6.4 does not yet search the /qt/qml resource prefix on its own.
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  QObject::connect(
      &engine, &QQmlApplicationEngine::objectCreated, &app,
      [](QObject* object, const QUrl&) {
        if (!object) QCoreApplication::exit(1);
      },
      Qt::QueuedConnection);
  engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Workbench/Ui/Main.qml")));
  if (engine.rootObjects().isEmpty()) return 1;

  auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());
  if (window) restoreGeometry(window, *controller->settings());

  QObject::connect(&app, &QCoreApplication::aboutToQuit, controller.get(), [&] {
    if (window)
      controller->settings()->setWindowGeometry(window->geometry(), window->visibility() == QWindow::Maximized);
    controller->shutdown();
  });

  installTestHooks(*controller);  // only with WB_TEST_* set (tests drive the real app)
  controller->start(parser.value(modelOption));
  const int rc = QApplication::exec();
  // Also when exec() returns without aboutToQuit (exit() from objectCreated). `engine` is destroyed
  // before `controller` (reverse declaration order), so QML never sees a dead `App`.
  controller->shutdown();
  return rc;
}
