// UI smoke test: the real Main.qml with the real AppController. Every page is shown, rendered and
// checked for a title and for not being blank; a model load and a load error show up in the UI.
// Set WB_SCREENSHOT_DIR to keep the rendered pages as PNGs (used to review the look).
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "appsingleton.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/train/preference_data.h"
#include "services/appcontroller.h"
#include "services/appsettings.h"
#include "services/chatcontroller.h"
#include "services/preferencepairs.h"
#include "services/serverservice.h"
#include "services/store/chatstore.h"
#include "services/inspectiontypes.h"
#include "support/quick_items.h"
#include "support/reply_end_ban.h"
#include "support/tiny_reward_model.h"
#include "support/tiny_tokenizer.h"
#include "tokenstreammodel.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

namespace {

// Distinct colours on a coarse grid: a blank or single-colour window has one or two.
int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  return colours.size();
}


void writeTinyModel(const QString& dir) {
  engine::ModelConfig c;
  c.n_layer = 2;
  c.n_embd = 32;
  c.n_head = 2;
  c.n_kv_head = 2;
  c.vocab_size = 512;
  c.max_seq_len = 64;
  c.ffn_dim = 128;
  engine::Model model(c);
  model.init_random(3);
  engine::save_hf_directory(model, dir.toStdString(), "", "{}");
}

// Same tiny model with the 512-token test tokenizer, so the Playground can generate from it.
void writeTinyTextModel(const QString& dir) {
  engine::ModelConfig c;
  c.n_layer = 2;
  c.n_embd = 32;
  c.n_head = 2;
  c.n_kv_head = 2;
  c.vocab_size = 512;
  c.max_seq_len = 128;
  c.ffn_dim = 128;
  engine::Model model(c);
  model.init_random(11);
  const QString tokenizerDir = dir + QStringLiteral("-tokenizer");
  QVERIFY(QDir().mkpath(tokenizerDir));
  writeTinyTokenizer(tokenizerDir);
  engine::save_hf_directory(model, dir.toStdString(), tokenizerDir.toStdString(), "{}");
}

// The first visible item of that name (a list's delegates hide the parts they do not need).
QQuickItem* findVisibleItem(QQuickItem* root, const QString& objectName) {
  if (!root->isVisible()) return nullptr;
  if (root->objectName() == objectName) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findVisibleItem(child, objectName)) return found;
  return nullptr;
}

// A ScrollView's (or Flickable's) vertical scroll bar: the ScrollBar item among its children.
QQuickItem* verticalScrollBar(QQuickItem* view) {
  for (QQuickItem* child : view->childItems())
    if (child->inherits("QQuickScrollBar") && child->property("orientation").toInt() == Qt::Vertical) return child;
  return nullptr;
}

QRectF sceneRect(QQuickItem* item) { return item->mapRectToScene(QRectF(0, 0, item->width(), item->height())); }

constexpr int kScrollBarAlwaysOn = 2;  // QQuickScrollBar::AlwaysOn

// Distinct colours inside `item`'s rectangle of a window grab.
int distinctColoursIn(const QImage& image, QQuickItem* item, qreal dpr) {
  const QRectF r = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
  return distinctColours(image.copy(QRectF(r.topLeft() * dpr, r.size() * dpr).toRect()));
}

}  // namespace

class TestUiSmoke : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void cleanupTestCase();
  void startsWithoutModel();
  void everyPageRenders_data();
  void everyPageRenders();
  void shortcutsSwitchPages();
  void fileDialogsOpen();
  void loadedModelIsShown();
  void topBarFitsTheWindow();
  void loadErrorIsShown();
  void darkThemeRenders();
  void settingsShowWhereDataIsKept();
  void welcomeNoteForStarterModel();
  void playgroundShowsTokens();
  void playgroundOutputTools();
  void playgroundChatMode();
  void inspectPageShowsAnInspection();
  void playgroundGeneratesWithStarterModel();
  void chatPageConverses();
  void chatComparesRepliesIntoPreferencePairs();
  void chatScoresRepliesWithARewardModel();
  void chatMessageOpensInInspect();
  void chatSearchTagsAndMessageUndo();
  void presetsAndRecentModels();
  void modelCardAndEvaluation();
  void serverPageServesAndLogs();

 private:
  QQuickItem* page(const QString& key) const;
  QImage grab(const QString& screenshotName, bool settle = true);

  QTemporaryDir m_dir;
  QStringList m_warnings;  // QML warnings seen so far; every test expects none
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<QQmlApplicationEngine> m_engine;
  QQuickWindow* m_window = nullptr;
};

void TestUiSmoke::initTestCase() {
  QStandardPaths::setTestModeEnabled(true);
  QSettings().clear();
  QVERIFY(m_dir.isValid());
  // No starter model: the app must open and say that no model is loaded.
  qputenv("WB_DATA_DIR", m_dir.filePath(QStringLiteral("share")).toUtf8());
  qputenv("WB_SESSION_DB", m_dir.filePath(QStringLiteral("sessions.db")).toUtf8());  // a fresh chat database
  // The offscreen platform has no GPU context; the software renderer draws the same scene.
  if (QGuiApplication::platformName() == QLatin1String("offscreen"))
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QQuickStyle::setStyle(QStringLiteral("Material"));

  m_controller = std::make_unique<AppController>();
  AppControllerForeign::setInstance(m_controller.get());
  m_engine = std::make_unique<QQmlApplicationEngine>();
  m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
  connect(m_engine.get(), &QQmlEngine::warnings, this, [this](const QList<QQmlError>& list) {
    for (const auto& w : list) m_warnings << w.toString();
  });
  m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/Workbench/Ui/Main.qml")));
  QVERIFY2(!m_engine->rootObjects().isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  m_window = qobject_cast<QQuickWindow*>(m_engine->rootObjects().constFirst());
  QVERIFY(m_window);
  m_window->resize(1200, 780);
  m_window->show();
  QVERIFY(QTest::qWaitForWindowExposed(m_window));
  m_controller->start();
  QTRY_VERIFY(!m_controller->backendName().isEmpty());
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::cleanupTestCase() {
  m_engine.reset();  // QML refers to the controller, so it goes first
  m_controller.reset();
}

QQuickItem* TestUiSmoke::page(const QString& key) const {
  return m_window->findChild<QQuickItem*>(QStringLiteral("page_") + key);
}

QImage TestUiSmoke::grab(const QString& screenshotName, bool settle) {
  if (settle) QTest::qWait(50);  // let bindings settle and the scene graph sync
  QImage image = m_window->grabWindow();
  const QString dir = qEnvironmentVariable("WB_SCREENSHOT_DIR");
  if (!dir.isEmpty() && !image.isNull()) {
    QDir().mkpath(dir);
    image.save(dir + QLatin1Char('/') + screenshotName + QStringLiteral(".png"));
  }
  return image;
}

void TestUiSmoke::startsWithoutModel() {
  QVERIFY(!m_controller->hasModel());
  QVERIFY(m_controller->statusMessage().contains(QStringLiteral("No model")));
  auto* name = m_window->findChild<QObject*>(QStringLiteral("topBarModelName"));
  QVERIFY(name);
  QCOMPARE(name->property("text").toString(), QStringLiteral("No model loaded"));
  auto* backend = m_window->findChild<QObject*>(QStringLiteral("backendLabel"));
  QVERIFY(backend);
  QTRY_VERIFY(backend->property("text").toString().startsWith(m_controller->backendName() + QStringLiteral(" — ")));
}

void TestUiSmoke::everyPageRenders_data() {
  QTest::addColumn<int>("index");
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("title");
  const QStringList keys{"chat", "playground", "inspect", "train", "runs", "models", "server", "settings"};
  const QStringList titles{"Chat", "Playground", "Inspect", "Train", "Runs", "Models", "Server", "Settings"};
  for (int i = 0; i < keys.size(); ++i) QTest::newRow(qPrintable(keys[i])) << i << keys[i] << titles[i];
}

void TestUiSmoke::everyPageRenders() {
  QFETCH(int, index);
  QFETCH(QString, key);
  QFETCH(QString, title);
  QVERIFY(m_window->setProperty("currentPage", index));
  QQuickItem* p = page(key);
  QVERIFY2(p, qPrintable(key));
  QTRY_VERIFY(p->isVisible());

  auto* titleLabel = p->findChild<QObject*>(QStringLiteral("pageTitle"));
  QVERIFY(titleLabel);
  QCOMPARE(titleLabel->property("text").toString(), title);
  auto* subtitle = p->findChild<QObject*>(QStringLiteral("pageSubtitle"));
  QVERIFY(subtitle);
  QVERIFY(!subtitle->property("text").toString().isEmpty());

  const QImage image = grab(key);
  QVERIFY(!image.isNull());
  QCOMPARE(image.size(), m_window->size() * m_window->devicePixelRatio());
  const int colours = distinctColours(image);
  QVERIFY2(colours >= 8, qPrintable(QStringLiteral("only %1 colours").arg(colours)));
}

void TestUiSmoke::shortcutsSwitchPages() {
  m_window->requestActivate();
  QTest::keyClick(m_window, Qt::Key_6, Qt::ControlModifier);
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 5);
  QTest::keyClick(m_window, Qt::Key_2, Qt::ControlModifier);
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 1);

  // A click on the rail switches too, and the shortcuts keep working after it.
  auto* runs = findItem(m_window->contentItem(), QStringLiteral("nav_runs"));
  QVERIFY(runs);
  const QPointF centre = runs->mapToScene(QPointF(runs->width() / 2, runs->height() / 2));
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 4);
  QTest::keyClick(m_window, Qt::Key_8, Qt::ControlModifier);
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 7);
  QTRY_VERIFY(findItem(m_window->contentItem(), QStringLiteral("nav_settings"))->property("current").toBool());
  QTest::keyClick(m_window, Qt::Key_7, Qt::ControlModifier);
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 6);
  QTRY_VERIFY(findItem(m_window->contentItem(), QStringLiteral("nav_server"))->property("current").toBool());
  QVERIFY(!runs->property("current").toBool());
}

void TestUiSmoke::fileDialogsOpen() {
  // Qt 6.4's non-native file dialog is written in QML on top of Qt.labs.folderlistmodel; without
  // that module, open() dereferences a null implementation and crashes. Fail readably instead.
  QQmlComponent probe(m_engine.get());
  probe.setData("import Qt.labs.folderlistmodel\nimport QtQml\nQtObject {}", QUrl());
  QVERIFY2(probe.isReady(),
           "QML module Qt.labs.folderlistmodel is missing (Debian: qml6-module-qt-labs-folderlistmodel); "
           "the file dialogs need it");
  for (const char* name : {"modelFileDialog", "modelFolderDialog"}) {
    QObject* dialog = m_window->findChild<QObject*>(QLatin1String(name));
    QVERIFY2(dialog, name);
    QVERIFY(QMetaObject::invokeMethod(m_window,
                                      std::strcmp(name, "modelFileDialog") == 0 ? "openModelFile" : "openModelFolder"));
    QTRY_VERIFY(dialog->property("visible").toBool());
    grab(QLatin1String(name));
    QVERIFY(QMetaObject::invokeMethod(dialog, "reject"));
    QTRY_VERIFY(!dialog->property("visible").toBool());
  }
  QVERIFY(!m_controller->loading());  // rejecting opens nothing
}

void TestUiSmoke::loadedModelIsShown() {
  const QString path = m_dir.filePath(QStringLiteral("tiny-model"));
  writeTinyModel(path);
  m_controller->openModel(QUrl::fromLocalFile(path).toString());  // as the file dialogs pass it
  QVERIFY(m_controller->loading());
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 20000);
  QVERIFY2(m_controller->hasModel(), qPrintable(m_controller->lastError()));
  QCOMPARE(m_controller->modelName(), QStringLiteral("tiny-model"));
  QCOMPARE(m_controller->settings()->lastModelPath(), path);
  QTRY_COMPARE(m_window->findChild<QObject*>(QStringLiteral("topBarModelName"))->property("text").toString(),
               QStringLiteral("tiny-model"));
  QVERIFY(m_controller->modelInfo().contains(QStringLiteral("GPT-2")));
  QVERIFY(m_window->setProperty("currentPage", 5));
  grab(QStringLiteral("models-loaded"));
  QVERIFY(m_window->setProperty("currentPage", 1));
  grab(QStringLiteral("playground-no-tokenizer"));
}

void TestUiSmoke::topBarFitsTheWindow() {
  // The default window size: the model's name and summary keep their room, the backend pill and the
  // open button stay inside the window, and whatever is elided is whole in the tooltip.
  QCOMPARE(m_window->size(), QSize(1200, 780));
  auto* summary = findItem(m_window->contentItem(), QStringLiteral("topBarModelSummary"));
  auto* pill = findItem(m_window->contentItem(), QStringLiteral("backendPill"));
  auto* open = findItem(m_window->contentItem(), QStringLiteral("topBarOpenButton"));
  QVERIFY(summary && pill && open);
  QVERIFY2(summary->width() >= 250, qPrintable(QString::number(summary->width())));
  const QRectF s = sceneRect(summary), p = sceneRect(pill), o = sceneRect(open);
  QVERIFY(s.right() <= p.left());
  QVERIFY(p.right() <= o.left());
  QVERIFY2(o.right() <= m_window->width(), qPrintable(QString::number(o.right())));
  QCOMPARE(summary->property("text").toString(), m_controller->modelInfo());
  grab(QStringLiteral("topbar-default-size"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("topbar-default-size-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
}

void TestUiSmoke::settingsShowWhereDataIsKept() {
  // The Settings page names the folders of the user's data, not the app's resources.
  QVERIFY(m_window->setProperty("currentPage", 7));
  QQuickItem* settings = page(QStringLiteral("settings"));
  QTRY_VERIFY(settings->isVisible());
  auto* database = findItem(settings, QStringLiteral("databaseFolderPath"));
  auto* runs = findItem(settings, QStringLiteral("runsFolderPath"));
  QVERIFY(database && runs);
  QCOMPARE(database->property("text").toString(), QFileInfo(m_dir.filePath(QStringLiteral("sessions.db"))).absolutePath());
  QCOMPARE(runs->property("text").toString(), m_controller->training()->runsRoot());
  QVERIFY(findItem(settings, QStringLiteral("runsFolderOpen"))->property("enabled").toBool());
  grab(QStringLiteral("settings-data"));
}

void TestUiSmoke::welcomeNoteForStarterModel() {
  m_warnings.clear();
  // A starter model where the app ships it (WB_DATA_DIR/models/starter): the first-run note says what
  // it is and where to go; closed, it stays closed.
  const QString starter = m_dir.filePath(QStringLiteral("share/models/starter"));
  writeTinyTextModel(starter);
  auto* note = findItem(m_window->contentItem(), QStringLiteral("welcomeNote"));
  QVERIFY(note);
  QVERIFY(!note->isVisible());  // another model is loaded
  m_controller->openModel(starter);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 20000);
  QVERIFY(m_controller->modelIsStarter());
  QVERIFY(m_window->setProperty("currentPage", 1));
  QTRY_VERIFY(note->isVisible());
  const QString text = findItem(note, QStringLiteral("welcomeText"))->property("text").toString();
  QVERIFY2(text.contains(QStringLiteral("knows only its own small world")), qPrintable(text));
  QTest::qWait(200);
  grab(QStringLiteral("welcome-note"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("welcome-note-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));

  // Its buttons go to the pages it names.
  auto* goInspect = findItem(note, QStringLiteral("welcomeGo_inspect"));
  QVERIFY(goInspect);
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    goInspect->mapToScene(QPointF(goInspect->width() / 2, goInspect->height() / 2)).toPoint());
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 2);
  auto* goModels = findItem(note, QStringLiteral("welcomeGo_models"));  // where its card and scores are
  QVERIFY(goModels);
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    goModels->mapToScene(QPointF(goModels->width() / 2, goModels->height() / 2)).toPoint());
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 5);

  auto* close = findItem(note, QStringLiteral("welcomeDismiss"));
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    close->mapToScene(QPointF(close->width() / 2, close->height() / 2)).toPoint());
  QTRY_VERIFY(!note->isVisible());
  QVERIFY(m_controller->settings()->welcomeDismissed());
  QVERIFY(AppSettings().welcomeDismissed());  // written through: a new start reads it back
  m_controller->settings()->setWelcomeDismissed(false);
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::playgroundOutputTools() {
  m_warnings.clear();
  // The tiny text model and the raw completion of playgroundShowsTokens are still there.
  QVERIFY(m_window->setProperty("currentPage", 1));
  QQuickItem* playground = page(QStringLiteral("playground"));
  auto* tokensA = playground->property("tokensA").value<TokenStreamModel*>();
  QVERIFY(tokensA);
  QTRY_VERIFY(!m_controller->generating());
  QTRY_VERIFY(tokensA->count() > 3);

  // The sampling column is taller than the window: its scroll bar is shown, beside the sliders.
  QQuickItem* settingsScroll = findItem(playground, QStringLiteral("settingsScroll"));
  QVERIFY(settingsScroll);
  QQuickItem* bar = verticalScrollBar(settingsScroll);
  QVERIFY(bar);
  QTRY_COMPARE(bar->property("policy").toInt(), kScrollBarAlwaysOn);
  QQuickItem* temperature = findItem(settingsScroll, QStringLiteral("temperatureSlider"));
  QVERIFY(temperature);
  QVERIFY2(sceneRect(temperature).right() + 6 <= sceneRect(bar).left(),
           qPrintable(QStringLiteral("slider ends at %1, scroll bar starts at %2")
                          .arg(sceneRect(temperature).right())
                          .arg(sceneRect(bar).left())));

  // Hovering a token opens its details below it: over neither the token nor the prompt above.
  QQuickItem* output = findItem(playground, QStringLiteral("outputTokensA"));
  QQuickItem* flow = findItem(output, QStringLiteral("tokenFlow"));
  QVERIFY(flow && flow->childItems().size() > 2);
  QQuickItem* chip = flow->childItems().at(2);
  QTest::mouseMove(m_window, chip->mapToScene(QPointF(chip->width() / 2, chip->height() / 2)).toPoint());
  QObject* tip = output->findChild<QObject*>(QStringLiteral("tokenHoverTip"));
  QVERIFY(tip);
  QTRY_VERIFY(tip->property("opened").toBool());
  auto* tipItem = tip->property("background").value<QQuickItem*>();
  QVERIFY(tipItem);
  const QRectF tipRect = sceneRect(tipItem), chipRect = sceneRect(chip);
  QVERIFY2(!tipRect.intersects(chipRect), "the tooltip covers the token");
  QVERIFY2(tipRect.top() >= sceneRect(output).top(), "the tooltip reaches over the prompt");
  grab(QStringLiteral("playground-hover"));
  QTest::mouseMove(m_window, QPoint(2, m_window->height() - 2));
  QTRY_VERIFY(!tip->property("visible").toBool());

  // The completion as plain text on the clipboard.
  QQuickItem* copy = findItem(playground, QStringLiteral("copyTextA"));
  QVERIFY(copy && copy->isVisible());
  QGuiApplication::clipboard()->clear();
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    copy->mapToScene(QPointF(copy->width() / 2, copy->height() / 2)).toPoint());
  // The clipboard stores text with '\n' line ends (a lone '\r' the random model wrote comes back as '\n').
  const QString expected = tokensA->text().replace(QStringLiteral("\r\n"), QStringLiteral("\n")).replace(QLatin1Char('\r'), QLatin1Char('\n'));
  QTRY_COMPARE(QGuiApplication::clipboard()->text(), expected);

  // A raw completion is no reply: switching to Chat clears the output.
  QVERIFY(playground->setProperty("chatMode", true));
  QCOMPARE(tokensA->count(), 0);
  QVERIFY(!copy->isVisible());
  QVERIFY(playground->setProperty("chatMode", false));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("playground-settings-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::loadErrorIsShown() {
  const QString bad = m_dir.filePath(QStringLiteral("not-a-model"));
  QDir().mkpath(bad);
  m_controller->openModel(bad);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 20000);
  QVERIFY(!m_controller->lastError().isEmpty());
  QVERIFY(m_controller->hasModel());  // the previous model stays
  QVERIFY(m_window->setProperty("currentPage", 5));
  auto* message = page(QStringLiteral("models"))->findChild<QObject*>(QStringLiteral("modelsError"));
  QVERIFY(message);
  QTRY_VERIFY(message->property("visible").toBool());
  QVERIFY(message->property("text").toString().contains(QStringLiteral("config.json")));
  grab(QStringLiteral("models-error"));
  m_controller->clearError();
  QTRY_VERIFY(!message->property("visible").toBool());
}

void TestUiSmoke::darkThemeRenders() {
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QVERIFY(m_window->setProperty("currentPage", 7));
  const QImage dark = grab(QStringLiteral("settings-dark"));
  // The window background follows the theme.
  QVERIFY(qGray(dark.pixel(dark.width() - 5, dark.height() / 2)) < 80);
  QVERIFY(m_window->setProperty("currentPage", 1));
  grab(QStringLiteral("playground-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  QVERIFY(m_window->setProperty("currentPage", 7));
  const QImage light = grab(QStringLiteral("settings-light"));
  QVERIFY(qGray(light.pixel(light.width() - 5, light.height() / 2)) > 180);
}

void TestUiSmoke::playgroundShowsTokens() {
  const QString path = m_dir.filePath(QStringLiteral("tiny-text"));
  writeTinyTextModel(path);
  m_controller->openModel(path);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 20000);
  QVERIFY2(m_controller->hasModel() && m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));

  QVERIFY(m_window->setProperty("currentPage", 1));
  QQuickItem* playground = page(QStringLiteral("playground"));
  QVERIFY(playground->setProperty("promptText", QStringLiteral("abc def, a cab fed")));
  // The prompt's tokens appear as chips after the debounce.
  QTRY_VERIFY_WITH_TIMEOUT(m_controller->promptTokens().size() > 3, 5000);
  QTRY_VERIFY(findItem(playground, QStringLiteral("promptTokens"))->isVisible());
  QTRY_VERIFY(playground->property("canGenerate").toBool());

  auto* tokensA = playground->property("tokensA").value<TokenStreamModel*>();
  QVERIFY(tokensA);
  QVERIFY(QMetaObject::invokeMethod(playground, "generate"));
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->generating(), 30000);
  QVERIFY2(m_controller->generationError().isEmpty(), qPrintable(m_controller->generationError()));
  QTRY_VERIFY(tokensA->count() > 0);
  QVERIFY(!tokensA->text().isEmpty());
  auto* stats = findItem(playground, QStringLiteral("generationStatsA"));
  QVERIFY(stats);
  QTRY_VERIFY(stats->property("text").toString().contains(QStringLiteral("tok/s")));

  QTest::qWait(400);  // button and popup transitions finish before the screenshots
  QImage image = grab(QStringLiteral("playground-tokens"));
  QQuickItem* output = findItem(playground, QStringLiteral("outputTokensA"));
  QVERIFY(output);
  // Coloured chips with text: far more than the two or three colours of an empty card.
  const int colours = distinctColoursIn(image, output, m_window->devicePixelRatio());
  QVERIFY2(colours >= 12, qPrintable(QStringLiteral("output shows only %1 colours").arg(colours)));

  // A click on a token opens its alternatives.
  QQuickItem* flow = findItem(output, QStringLiteral("tokenFlow"));
  QVERIFY(flow && !flow->childItems().isEmpty());
  QQuickItem* chip = flow->childItems().at(1);
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    chip->mapToScene(QPointF(chip->width() / 2, chip->height() / 2)).toPoint());
  QObject* popup = output->findChild<QObject*>(QStringLiteral("alternativesPopup"));
  QVERIFY(popup);
  QTRY_VERIFY(popup->property("visible").toBool());
  QCOMPARE(popup->property("row").toInt(), 1);
  QTest::qWait(400);
  grab(QStringLiteral("playground-alternatives"));
  QVERIFY(QMetaObject::invokeMethod(popup, "close"));
  QTRY_VERIFY(!popup->property("visible").toBool());
  // The pointer leaves the output: the chips under it are replaced by the next runs, and a hover
  // tooltip of a chip being destroyed has no window to open in (a QML warning).
  QTest::mouseMove(m_window, QPoint(2, m_window->height() - 2));

  // Force the second alternative of token 2: output is cut there and continues after it.
  const QVariantMap before = tokensA->get(2);
  const QVariantList alts = before.value(QStringLiteral("alternatives")).toList();
  QVERIFY(alts.size() >= 2);
  const int forcedId = alts.at(1).toMap().value(QStringLiteral("id")).toInt();
  QVERIFY(QMetaObject::invokeMethod(playground, "forceAlternative", Q_ARG(QVariant, QStringLiteral("A")),
                                    Q_ARG(QVariant, 2), Q_ARG(QVariant, 1)));
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->generating(), 30000);
  QTRY_VERIFY(tokensA->count() > 3);
  QCOMPARE(tokensA->get(2).value(QStringLiteral("id")).toInt(), forcedId);

  // Compare: A then B with the same seed; identical settings give identical outputs.
  QVERIFY(playground->setProperty("compare", true));
  auto* tokensB = playground->property("tokensB").value<TokenStreamModel*>();
  QVERIFY(QMetaObject::invokeMethod(playground, "generate"));
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->generating() && !playground->property("pendingB").toBool() &&
                               tokensB->count() > 0 && !m_controller->generating(),
                           30000);
  QTRY_VERIFY_WITH_TIMEOUT(findItem(playground, QStringLiteral("generationStatsB"))
                               ->property("text")
                               .toString()
                               .contains(QStringLiteral("tok/s")),
                           30000);
  QCOMPARE(tokensB->ids(), tokensA->ids());
  QTest::qWait(400);
  image = grab(QStringLiteral("playground-compare"));
  QVERIFY(distinctColoursIn(image, findItem(playground, QStringLiteral("outputTokensB")),
                            m_window->devicePixelRatio()) >= 12);

  // Ctrl+Enter in the prompt generates (the Shortcut wins over the text area's Return).
  QSignalSpy done(m_controller.get(), &AppController::generationDone);
  auto* promptArea = findItem(playground, QStringLiteral("promptArea"));
  QVERIFY(promptArea);
  promptArea->forceActiveFocus();
  QTRY_VERIFY(promptArea->hasActiveFocus());
  const QString promptBefore = playground->property("promptText").toString();
  QTest::keyClick(m_window, Qt::Key_Return, Qt::ControlModifier);
  QTRY_VERIFY_WITH_TIMEOUT(done.count() >= 2, 30000);                     // A, then B
  QCOMPARE(playground->property("promptText").toString(), promptBefore);  // no newline typed

  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("playground-compare-dark"));
  QVERIFY(playground->setProperty("compare", false));
  grab(QStringLiteral("playground-tokens-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::playgroundChatMode() {
  m_warnings.clear();
  QVERIFY2(m_controller->hasModel() && m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));
  QVERIFY(m_window->setProperty("currentPage", 1));
  QQuickItem* playground = page(QStringLiteral("playground"));
  QVERIFY(playground->setProperty("compare", false));
  QVERIFY(playground->setProperty("chatMode", true));
  auto* modeTabs = findItem(playground, QStringLiteral("playgroundMode"));
  QVERIFY(modeTabs);
  QCOMPARE(modeTabs->property("currentIndex").toInt(), 1);
  QTRY_VERIFY(findItem(playground, QStringLiteral("chatEditor"))->isVisible());
  QVERIFY(!findItem(playground, QStringLiteral("promptArea"))->isVisible());
  // Which template renders the chat is shown (the tiny model names none: plain).
  QCOMPARE(m_controller->chatTemplateName(), QStringLiteral("plain"));
  auto* templateLabel = findItem(playground, QStringLiteral("chatTemplateLabel"));
  QVERIFY(templateLabel && templateLabel->isVisible());
  QVERIFY(templateLabel->property("text").toString().contains(QStringLiteral("Template: plain")));
  QVERIFY(!playground->property("canGenerate").toBool());  // no user message yet

  auto message = [](const char* role, const char* content) {
    return QVariantMap{{QStringLiteral("role"), QString::fromLatin1(role)},
                       {QStringLiteral("content"), QString::fromLatin1(content)}};
  };
  const QVariantList messages{message("user", "abc def"), message("assistant", "cab fed"), message("user", "a cab")};
  QVERIFY(QMetaObject::invokeMethod(playground, "setChat", Q_ARG(QVariant, QStringLiteral("Answer in few words.")),
                                    Q_ARG(QVariant, messages)));
  QTRY_VERIFY(playground->property("canGenerate").toBool());
  QCOMPARE(findItem(playground, QStringLiteral("turnText2"))->property("text").toString(), QStringLiteral("a cab"));
  // The chips show the rendered chat: every message with the template's role text around it.
  auto chipsText = [&] {
    QString all;
    for (const QVariant& t : m_controller->promptTokens()) all += t.toMap().value(QStringLiteral("text")).toString();
    return all;
  };
  QTRY_VERIFY_WITH_TIMEOUT(chipsText().contains(QStringLiteral("Answer in few words.")), 5000);
  const QString rendered = chipsText();
  QVERIFY2(rendered.contains(QStringLiteral("Answer in few words.")) && rendered.contains(QStringLiteral("cab fed")) &&
               rendered.indexOf(QStringLiteral("abc def")) < rendered.indexOf(QStringLiteral("a cab")),
           qPrintable(rendered));
  QVERIFY(rendered.size() > QStringLiteral("Answer in few words.abc defcab feda cab").size());
  QTRY_VERIFY(findItem(playground, QStringLiteral("chatPromptTokens"))->isVisible());
  // The conversation is taller than its card: its scroll bar is shown, so "Add message" and the
  // chips below are found.
  QQuickItem* chatEditor = findItem(playground, QStringLiteral("chatEditor"));
  QQuickItem* chatBar = verticalScrollBar(chatEditor);
  QVERIFY(chatBar);
  QTRY_VERIFY(chatEditor->property("contentHeight").toDouble() <= chatEditor->height() ||
              chatBar->property("policy").toInt() == kScrollBarAlwaysOn);

  auto* tokensA = playground->property("tokensA").value<TokenStreamModel*>();
  QSignalSpy done(m_controller.get(), &AppController::generationDone);
  QVERIFY(QMetaObject::invokeMethod(playground, "generate"));
  QVERIFY(m_controller->generating());
  QCOMPARE(m_controller->generationLane(), QStringLiteral("A"));
  QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 30000);
  QVERIFY2(done.first().at(2).toString().isEmpty(), qPrintable(done.first().at(2).toString()));
  // The prompt was the rendered chat, not the raw text of the messages.
  QCOMPARE(done.first().at(1).toMap().value(QStringLiteral("promptTokens")).toInt(),
           int(m_controller->promptTokens().size()));
  QTRY_VERIFY(tokensA->count() > 0);
  QVERIFY(!tokensA->get(0).value(QStringLiteral("alternatives")).toList().isEmpty());
  QTRY_VERIFY(findItem(playground, QStringLiteral("generationStatsA"))
                  ->property("text")
                  .toString()
                  .contains(QStringLiteral("tok/s")));
  QTest::qWait(400);
  grab(QStringLiteral("playground-chat"));

  // A forced alternative continues the reply from the same chat.
  if (tokensA->count() >= 2) {
    const QVariantList alts = tokensA->get(1).value(QStringLiteral("alternatives")).toList();
    QVERIFY(alts.size() >= 2);
    const int forcedId = alts.at(1).toMap().value(QStringLiteral("id")).toInt();
    QVERIFY(QMetaObject::invokeMethod(playground, "forceAlternative", Q_ARG(QVariant, QStringLiteral("A")),
                                      Q_ARG(QVariant, 1), Q_ARG(QVariant, 1)));
    QTRY_VERIFY_WITH_TIMEOUT(done.count() == 2, 30000);
    QVERIFY(done.last().at(2).toString().isEmpty());
    QCOMPARE(done.last().at(1).toMap().value(QStringLiteral("promptTokens")).toInt(),
             int(m_controller->promptTokens().size()));
    QCOMPARE(tokensA->get(1).value(QStringLiteral("id")).toInt(), forcedId);
  }

  // A/B compare in chat mode: both sides answer the same chat with the same seed.
  QVERIFY(playground->setProperty("compare", true));
  auto* tokensB = playground->property("tokensB").value<TokenStreamModel*>();
  done.clear();
  QVERIFY(QMetaObject::invokeMethod(playground, "generate"));
  QTRY_VERIFY_WITH_TIMEOUT(done.count() == 2 && !m_controller->generating(), 30000);
  QCOMPARE(done.at(1).at(0).toString(), QStringLiteral("B"));
  QCOMPARE(done.at(1).at(1).toMap().value(QStringLiteral("promptTokens")),
           done.at(0).at(1).toMap().value(QStringLiteral("promptTokens")));
  QCOMPARE(tokensB->ids(), tokensA->ids());  // identical settings, identical replies
  QTest::qWait(400);
  grab(QStringLiteral("playground-chat-compare"));

  QVERIFY(playground->setProperty("compare", false));
  QVERIFY(playground->setProperty("chatMode", false));
  QTRY_VERIFY(findItem(playground, QStringLiteral("promptArea"))->isVisible());
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::chatMessageOpensInInspect() {
  m_warnings.clear();
  QVERIFY(m_window->setProperty("currentPage", 0));
  QQuickItem* chat = page(QStringLiteral("chat"));
  QTRY_VERIFY(chat->isVisible());
  ChatController* controller = m_controller->chat();
  controller->newChat();
  controller->setGenerationSettings({{QStringLiteral("maxTokens"), 8}});
  QVERIFY(controller->send(QStringLiteral("Show me your attention")));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QCOMPARE(controller->messages()->rowCount(), 2);
  // The last message's actions are always shown; its Inspect button is the last one found.
  QQuickItem* button = nullptr;
  QTRY_VERIFY((button = findVisibleItem(chat, QStringLiteral("action_inspect"))) != nullptr);
  QList<QQuickItem*> buttons;
  std::function<void(QQuickItem*)> collect = [&](QQuickItem* item) {
    if (item->objectName() == QLatin1String("action_inspect") && item->isVisible()) buttons << item;
    for (QQuickItem* child : item->childItems()) collect(child);
  };
  collect(chat);
  QCOMPARE(buttons.size(), 2);
  // The user message's button (the delegates' order among the list's children is not the rows').
  const qint64 userId = controller->messages()->rowAt(0).message.id;
  auto messageOf = [](QQuickItem* item) {
    for (; item; item = item->parentItem())
      if (item->property("messageId").isValid()) return item->property("messageId").toLongLong();
    return qint64(0);
  };
  button = messageOf(buttons.first()) == userId ? buttons.first() : buttons.last();
  QCOMPARE(messageOf(button), userId);
  QTest::qWait(200);
  QTest::mouseMove(m_window, button->mapToScene(QPointF(button->width() / 2, button->height() / 2)).toPoint());
  QTest::qWait(900);  // the tooltip's delay
  grab(QStringLiteral("chat-inspect-action"));
  QSignalSpy changed(m_controller.get(), &AppController::inspectionChanged);
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    button->mapToScene(QPointF(button->width() / 2, button->height() / 2)).toPoint());
  QTRY_COMPARE(m_window->property("currentPage").toInt(), 2);
  QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), 30000);
  const InspectionPtr in = inspectionFrom(m_controller->inspection());
  QVERIFY(in && in->T > 0);
  QVERIFY2(m_controller->inspectError().isEmpty(), qPrintable(m_controller->inspectError()));
  QTest::qWait(300);
  QQuickItem* source = findVisibleItem(page(QStringLiteral("inspect")), QStringLiteral("inspectSource"));
  QVERIFY(source);
  QVERIFY2(source->property("text").toString().contains(QStringLiteral("Show me your attention")),
           qPrintable(source->property("text").toString()));
  grab(QStringLiteral("inspect-from-chat"));
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::inspectPageShowsAnInspection() {
  // The tiny text model of playgroundShowsTokens is loaded.
  QVERIFY(m_controller->hasModel() && m_controller->modelHasTokenizer());
  QVERIFY(m_window->setProperty("currentPage", 2));
  QQuickItem* inspect = page(QStringLiteral("inspect"));
  QVERIFY(inspect->setProperty("inputText", QStringLiteral("abc def, a cab fed. abc def")));
  QVERIFY(QMetaObject::invokeMethod(inspect, "inspect"));
  QVERIFY(m_controller->inspecting());
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->inspecting(), 30000);
  QVERIFY2(m_controller->inspectError().isEmpty(), qPrintable(m_controller->inspectError()));
  QQuickItem* heatmap = findItem(inspect, QStringLiteral("attentionHeatmap"));
  QVERIFY(heatmap);
  QTRY_VERIFY(heatmap->property("tokenCount").toInt() > 4);
  QTest::qWait(300);
  const qreal dpr = m_window->devicePixelRatio();
  QImage image = grab(QStringLiteral("inspect-attention"));
  QVERIFY(distinctColoursIn(image, heatmap, dpr) > 6);
  QQuickItem* lines = findItem(inspect, QStringLiteral("attentionLines"));
  QVERIFY(lines);
  QVERIFY(lines->setProperty("selectedToken", 3));
  QCOMPARE(heatmap->property("selectedToken").toInt(), 3);  // the two views select together
  grab(QStringLiteral("inspect-attention-selected"));

  QVERIFY(inspect->setProperty("currentView", 1));
  QQuickItem* grid = findItem(inspect, QStringLiteral("headGrid"));
  QTRY_VERIFY(grid && grid->isVisible());
  // Thumbnails come from the thread pool.
  QObject* gridModel = inspect->findChild<QObject*>(QStringLiteral("headGridModel"));
  QVERIFY(gridModel);
  QTRY_VERIFY_WITH_TIMEOUT(gridModel->property("ready").toBool(), 30000);
  image = grab(QStringLiteral("inspect-heads"));
  QVERIFY(distinctColoursIn(image, grid, dpr) > 6);

  // A click opens a head; a Ctrl-click adds another (here of another layer or head): the heatmap then
  // shows the overlay of the two, and the legend says which heads and how they combine.
  const InspectionPtr in = inspectionFrom(m_controller->inspection());
  QVERIFY(in && in->n_layer * in->n_head >= 2);
  const engine::HeadRef first{0, 0}, second{in->n_layer - 1, in->n_head - 1};
  QVERIFY(QMetaObject::invokeMethod(inspect, "clickHead", Q_ARG(QVariant, first.layer), Q_ARG(QVariant, first.head),
                                    Q_ARG(QVariant, 0)));
  QCOMPARE(inspect->property("currentView").toInt(), 0);  // opened
  QVERIFY(inspect->setProperty("currentView", 1));
  QVERIFY(QMetaObject::invokeMethod(inspect, "clickHead", Q_ARG(QVariant, second.layer), Q_ARG(QVariant, second.head),
                                    Q_ARG(QVariant, int(Qt::ControlModifier))));
  QCOMPARE(inspect->property("currentView").toInt(), 1);  // stays on the grid
  QVERIFY(inspect->property("overlayActive").toBool());
  QCOMPARE(heatmap->property("overlayHeads").toList().size(), 2);
  QTRY_VERIFY_WITH_TIMEOUT(!heatmap->property("busy").toBool(), 30000);
  const auto shown = [heatmap](int q, int k) {
    double v = -1;
    QMetaObject::invokeMethod(heatmap, "valueAt", Q_RETURN_ARG(double, v), Q_ARG(int, q), Q_ARG(int, k));
    return v;
  };
  const auto overlaid = [&](int q, int k, bool max) {
    const double a = in->att(first.layer, first.head, q, k), b = in->att(second.layer, second.head, q, k);
    return max ? std::max(a, b) : (a + b) / 2;
  };
  for (int q = 0; q < in->T; ++q) QVERIFY(std::abs(shown(q, 0) - overlaid(q, 0, false)) < 1e-6);
  QQuickItem* legendTitle = findVisibleItem(inspect, QStringLiteral("overlayLegendTitle"));
  QVERIFY(legendTitle);
  QCOMPARE(legendTitle->property("text").toString(), QStringLiteral("Mean of 2 heads:"));
  QTest::qWait(100);
  grab(QStringLiteral("inspect-heads-picked"));
  QVERIFY(inspect->setProperty("currentView", 0));
  QVERIFY(inspect->setProperty("overlayMode", 1));  // AttentionHeatmap.OverlayMax
  QTRY_VERIFY_WITH_TIMEOUT(!heatmap->property("busy").toBool() &&
                               std::abs(shown(in->T - 1, 0) - overlaid(in->T - 1, 0, true)) < 1e-6,
                           30000);
  legendTitle = findVisibleItem(inspect, QStringLiteral("overlayLegendTitle"));
  QVERIFY(legendTitle);
  QCOMPARE(legendTitle->property("text").toString(), QStringLiteral("Max of 2 heads:"));
  QTest::qWait(200);
  grab(QStringLiteral("inspect-overlay"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QTest::qWait(200);
  grab(QStringLiteral("inspect-overlay-dark"));
  QVERIFY(inspect->setProperty("currentView", 1));
  QTest::qWait(200);
  grab(QStringLiteral("inspect-heads-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  QObject* picked = inspect->findChild<QObject*>(QStringLiteral("headSelection"));
  QVERIFY(picked && QMetaObject::invokeMethod(picked, "clear"));
  QVERIFY(inspect->setProperty("overlayMode", 0));
  QVERIFY(!inspect->property("overlayActive").toBool());
  QCOMPARE(heatmap->property("overlayHeads").toList().size(), 0);

  // Layers are counted from 0 and say so.
  QCOMPARE(findItem(inspect, QStringLiteral("layerBox"))->property("displayText").toString(),
           QStringLiteral("0 (of 0–%1)").arg(in->n_layer - 1));

  QVERIFY(inspect->setProperty("currentView", 2));
  QQuickItem* lens = findItem(inspect, QStringLiteral("lensView"));
  QTRY_VERIFY(lens && lens->isVisible());
  // Every position fits, or the scroll bar says that more are to the side.
  QObject* lensBar = inspect->findChild<QObject*>(QStringLiteral("lensScrollBar"));
  QVERIFY(lensBar);
  QTRY_VERIFY(lens->property("contentWidth").toDouble() <= lens->width() + 1 ||
              lensBar->property("policy").toInt() == kScrollBarAlwaysOn);
  QTest::qWait(200);
  image = grab(QStringLiteral("inspect-lens"));
  QVERIFY(distinctColoursIn(image, lens, dpr) > 4);
  QVERIFY(inspect->setProperty("currentView", 0));

  // A snapshot reopens the same inspection without the engine; a corrupt one is refused by name.
  const int tokens = heatmap->property("tokenCount").toInt();
  const QString snap = m_dir.filePath(QStringLiteral("x.wbinspect"));
  QCOMPARE(m_controller->saveInspection(QUrl::fromLocalFile(snap).toString()), QString());
  QVERIFY(inspect->setProperty("inputText", QStringLiteral("abc")));
  QVERIFY(QMetaObject::invokeMethod(inspect, "inspect"));
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->inspecting(), 30000);
  QTRY_VERIFY(heatmap->property("tokenCount").toInt() < tokens);
  QCOMPARE(m_controller->openInspection(snap), QString());
  QTRY_COMPARE(heatmap->property("tokenCount").toInt(), tokens);
  QFile f(snap);
  QVERIFY(f.open(QIODevice::ReadWrite));
  f.seek(40);
  f.write("\xff\xff");
  f.close();
  QVERIFY(m_controller->openInspection(snap).contains(QStringLiteral("checksum")));
  QCOMPARE(heatmap->property("tokenCount").toInt(), tokens);  // the failed open changed nothing
}

void TestUiSmoke::playgroundGeneratesWithStarterModel() {
  // The starter model is generated by the build (resources/); a partial build may not have it.
  const QString starter = QStringLiteral(WB_BUILD_DATADIR "/models/starter");
  if (!QFile::exists(starter + QStringLiteral("/config.json"))) QSKIP("starter model not built");
  QVERIFY(m_window->setProperty("currentPage", 5));
  m_controller->openModel(starter);
  QVERIFY(m_window->findChild<QObject*>(QStringLiteral("loadProgressBar"))->property("visible").toBool());
  grab(QStringLiteral("models-loading"), false);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 60000);
  QVERIFY2(m_controller->hasModel() && m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));

  QVERIFY(m_window->setProperty("currentPage", 1));
  QQuickItem* playground = page(QStringLiteral("playground"));
  QVERIFY(playground->setProperty("promptText", QStringLiteral("Once upon a time")));
  QTRY_VERIFY(playground->property("canGenerate").toBool());
  QVERIFY(QMetaObject::invokeMethod(playground, "generate"));
  QVERIFY(m_controller->generating());
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->generating(), 60000);
  QVERIFY2(m_controller->generationError().isEmpty(), qPrintable(m_controller->generationError()));
  QVERIFY(!m_controller->generationStats().isEmpty());
  auto* tokens = playground->property("tokensA").value<TokenStreamModel*>();
  QVERIFY(tokens);
  QTRY_VERIFY(tokens->count() > 0);
  QVERIFY(!tokens->text().isEmpty());
  QTest::qWait(400);  // transitions finish before the screenshot
  grab(QStringLiteral("playground-generated"));

  // Esc stops a long generation within a token or so.
  QQuickItem* maxTokens = findItem(playground, QStringLiteral("maxTokensBox"));
  QVERIFY(maxTokens);
  QVERIFY(maxTokens->setProperty("value", 500));
  QVERIFY(QMetaObject::invokeMethod(playground, "generate"));
  QTRY_VERIFY_WITH_TIMEOUT(tokens->count() > 0, 30000);
  m_window->requestActivate();
  QTest::keyClick(m_window, Qt::Key_Escape);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->generating(), 30000);
  auto* stats = findItem(playground, QStringLiteral("generationStatsA"));
  QTRY_VERIFY(stats->property("text").toString().endsWith(QStringLiteral("cancelled")));
  QVERIFY2(tokens->count() < 500, qPrintable(QString::number(tokens->count())));
}

void TestUiSmoke::chatPageConverses() {
  m_warnings.clear();  // this test answers for its own warnings (see presetsAndRecentModels too)
  // Whichever model the tests before left loaded (the starter model, else the tiny text model).
  QVERIFY2(m_controller->hasModel() && m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));
  QVERIFY(m_window->setProperty("currentPage", 0));
  QQuickItem* chat = page(QStringLiteral("chat"));
  QTRY_VERIFY(chat->isVisible());
  ChatController* controller = m_controller->chat();
  QVERIFY(controller);
  QTRY_VERIFY(chat->property("canSend").toBool());
  QVERIFY(findItem(chat, QStringLiteral("chatEmptyState"))->isVisible());
  grab(QStringLiteral("chat-empty"));

  // Ctrl+N makes a chat; Shift+Enter is a new line, Enter sends.
  m_window->requestActivate();
  QTest::keyClick(m_window, Qt::Key_N, Qt::ControlModifier);
  QTRY_VERIFY(controller->currentChatId() != 0);
  auto* input = findItem(chat, QStringLiteral("chatInput"));
  QVERIFY(input);
  QTRY_VERIFY(input->hasActiveFocus());
  auto type = [&](const char* text) {  // QTest::keyClicks takes widgets only
    for (const char* c = text; *c; ++c) QTest::keyClick(m_window, *c);
  };
  type("Hello");
  QTest::keyClick(m_window, Qt::Key_Return, Qt::ShiftModifier);
  type("there");
  QCOMPARE(input->property("text").toString(), QStringLiteral("Hello\nthere"));
  QCOMPARE(controller->messages()->rowCount(), 0);
  QTest::keyClick(m_window, Qt::Key_Return);
  QTRY_VERIFY(input->property("text").toString().isEmpty());
  QCOMPARE(controller->messages()->rowCount(), 2);
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QVERIFY2(controller->lastError().isEmpty(), qPrintable(controller->lastError()));
  const QString stats =
      controller->messages()->data(controller->messages()->index(1), ChatMessageModel::StatsTextRole).toString();
  QVERIFY2(stats.contains(QStringLiteral("tok/s")), qPrintable(stats));
  QCOMPARE(controller->currentTitle(), QStringLiteral("Hello there"));
  // The context meter counts the rendered chat.
  QTRY_VERIFY(controller->contextUsed() > 0);
  QCOMPARE(controller->contextLength(), m_controller->modelContextLength());
  auto* contextLabel = findItem(chat, QStringLiteral("contextLabel"));
  QVERIFY(contextLabel && contextLabel->isVisible());
  QVERIFY(contextLabel->property("text").toString().contains(QString::number(controller->contextLength())));

  // Markdown and a code block with its copy button, as an assistant reply renders them.
  const qint64 reply = controller->messages()->rowAt(1).message.id;
  QVERIFY(controller->editMessage(reply, QStringLiteral("Here is **bold** text and "
                                                        "code:\n\n```python\nprint(\"hi\")\n```\n\nDone.")));
  QTRY_VERIFY(findItem(chat, QStringLiteral("codeCopyButton")) != nullptr);
  auto branchLabel = [&]() -> QString {
    QQuickItem* label = findVisibleItem(chat, QStringLiteral("branchLabel"));
    return label ? label->property("text").toString() : QString();
  };
  QTRY_COMPARE(branchLabel(), QStringLiteral("2 / 2"));
  QVERIFY(controller->regenerate(controller->messages()->rowAt(1).message.id));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QTRY_COMPARE(branchLabel(), QStringLiteral("3 / 3"));
  controller->switchSibling(controller->messages()->rowAt(1).message.id, -1);
  QTRY_COMPARE(branchLabel(), QStringLiteral("2 / 3"));
  controller->setSystemPrompt(QStringLiteral("You are a concise assistant."));
  QTest::qWait(400);
  QImage image = grab(QStringLiteral("chat"));
  QQuickItem* list = findItem(chat, QStringLiteral("messageList"));
  QVERIFY(distinctColoursIn(image, list, m_window->devicePixelRatio()) >= 12);

  // The sampling popup sets the settings of the next replies.
  auto* samplingPopup = chat->findChild<QObject*>(QStringLiteral("chatSamplingPopup"));
  QVERIFY(samplingPopup);
  QVERIFY(QMetaObject::invokeMethod(samplingPopup, "open"));
  QTRY_VERIFY(samplingPopup->property("opened").toBool());
  QTest::qWait(300);
  grab(QStringLiteral("chat-sampling"));
  auto* popupContent = samplingPopup->property("contentItem").value<QQuickItem*>();
  QVERIFY(popupContent);
  QQuickItem* chatTemperature = findItem(popupContent, QStringLiteral("temperatureSlider"));
  QVERIFY(chatTemperature);
  QCOMPARE(chatTemperature->property("value").toDouble(), 0.8);  // shows the chat's current settings
  QVERIFY(chatTemperature->setProperty("value", 0.0));
  QVERIFY(QMetaObject::invokeMethod(samplingPopup, "close"));
  QTRY_COMPARE(controller->generationSettings().value(QStringLiteral("temperature")).toDouble(), 0.0);

  // Esc stops a reply. On the starter model the end of a reply is banned, so a reply always runs on for
  // seconds and the stop always lands.
  const bool slowModel = m_controller->modelName() == QLatin1String("starter");
  controller->setGenerationSettings(
      {{QStringLiteral("maxTokens"), 4000},
       {QStringLiteral("logitBias"), slowModel ? replyEndBan(m_controller->modelPath()) : QString()}});
  QVERIFY(controller->send(QStringLiteral("Tell me a long story")));
  QVERIFY(controller->generating());
  m_window->requestActivate();
  QTest::keyClick(m_window, Qt::Key_Escape);
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 30000);
  auto lastReason = [&] {
    const ChatMessageModel* m = controller->messages();
    return m->rowAt(m->rowCount() - 1).message.stats.value(QStringLiteral("finishReason")).toString();
  };
  if (slowModel) QCOMPARE(lastReason(), QStringLiteral("cancelled"));
  // The reply keeps the settings it was made with: greedy, from the popup.
  QCOMPARE(controller->messages()
               ->data(controller->messages()->index(controller->messages()->rowCount() - 1),
                      ChatMessageModel::SettingsTextRole)
               .toString()
               .left(6),
           QStringLiteral("greedy"));
  // The send button turns into a stop button while a reply is written; clicking it stops too.
  QVERIFY(controller->send(QStringLiteral("And another one")));
  QQuickItem* stopButton = findVisibleItem(chat, QStringLiteral("stopButton"));
  QVERIFY(stopButton);
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    stopButton->mapToScene(QPointF(stopButton->width() / 2, stopButton->height() / 2)).toPoint());
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 30000);
  if (slowModel) QCOMPARE(lastReason(), QStringLiteral("cancelled"));
  QTRY_VERIFY(findVisibleItem(chat, QStringLiteral("sendButton")));

  // Delete with undo.
  const qint64 id = controller->currentChatId();
  controller->deleteChat(id);
  auto* undo = findItem(chat, QStringLiteral("undoBanner"));
  QTRY_VERIFY(undo->isVisible());
  grab(QStringLiteral("chat-undo"));
  auto* undoButton = findItem(chat, QStringLiteral("undoDeleteButton"));
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    undoButton->mapToScene(QPointF(undoButton->width() / 2, undoButton->height() / 2)).toPoint());
  QTRY_COMPARE(controller->currentChatId(), id);
  QTRY_VERIFY(!undo->isVisible());

  // Full-text search from the sidebar: a hit shows its chat with the words in context.
  auto* search = findItem(chat, QStringLiteral("chatSearchField"));
  QVERIFY(search && search->setProperty("text", QStringLiteral("bold")));
  QTRY_COMPARE(controller->searchText(), QStringLiteral("bold"));
  QTRY_COMPARE(controller->chats()->rowCount(), 1);
  QVERIFY(controller->chats()
              ->data(controller->chats()->index(0), ChatListModel::SnippetRole)
              .toString()
              .contains(QString(QChar(kSnippetMatchBegin)) + QStringLiteral("bold") + QChar(kSnippetMatchEnd)));
  QTest::qWait(200);
  grab(QStringLiteral("chat-search"));
  QVERIFY(search->setProperty("text", QString()));
  QTRY_VERIFY(controller->searchText().isEmpty());

  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QTest::qWait(200);
  grab(QStringLiteral("chat-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::chatComparesRepliesIntoPreferencePairs() {
  m_warnings.clear();
  QVERIFY2(m_controller->hasModel() && m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));
  QVERIFY(m_window->setProperty("currentPage", 0));
  QQuickItem* chat = page(QStringLiteral("chat"));
  QTRY_VERIFY(chat->isVisible());
  ChatController* controller = m_controller->chat();
  PreferencePairs* prefs = m_controller->preferences();
  QVERIFY(prefs);
  const int pairsBefore = prefs->count();
  const QVariantMap settingsBefore = controller->generationSettings();
  // Short sampled replies (the test before left greedy, long ones).
  controller->setGenerationSettings({{QStringLiteral("temperature"), 0.9},
                                     {QStringLiteral("maxTokens"), 24},
                                     {QStringLiteral("logitBias"), QString()}});
  QVERIFY(controller->newChat());
  QVERIFY(controller->send(QStringLiteral("Which is better for a rainy afternoon, tea or coffee?")));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QTRY_VERIFY(findVisibleItem(chat, QStringLiteral("action_compare")));
  QVERIFY(findVisibleItem(chat, QStringLiteral("action_compare"))->isEnabled());
  const QString original = controller->messages()->rows().constLast().message.content;

  // Ctrl+Shift+C: the second reply streams into the panel under the chat, which replaces the composer.
  m_window->requestActivate();
  QTest::keyClick(m_window, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
  QTRY_VERIFY(controller->comparing());
  QQuickItem* panel = findItem(chat, QStringLiteral("comparePanel"));
  QVERIFY(panel);
  QTRY_VERIFY(panel->isVisible());
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QVERIFY2(controller->lastError().isEmpty(), qPrintable(controller->lastError()));
  QVERIFY(!controller->compareAlternative().isEmpty());
  QVERIFY(!findVisibleItem(chat, QStringLiteral("chatInput")));
  auto* keepB = findVisibleItem(panel, QStringLiteral("keepB"));
  QVERIFY(keepB);
  QTRY_VERIFY(keepB->isEnabled());
  // Both replies fully inside the window, side by side, and the panel not over the conversation.
  const QRectF window(0, 0, m_window->width(), m_window->height());
  auto* textA = findItem(panel, QStringLiteral("compareTextA"));
  auto* textB = findItem(panel, QStringLiteral("compareTextB"));
  QVERIFY(textA && textB);
  QVERIFY(window.contains(sceneRect(panel)));
  QVERIFY(!sceneRect(textA).intersects(sceneRect(textB)));
  QVERIFY(sceneRect(findItem(chat, QStringLiteral("messageList"))).bottom() <= sceneRect(panel).top());
  grab(QStringLiteral("chat-compare"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QTest::qWait(200);
  grab(QStringLiteral("chat-compare-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));

  // Edit B, then keep it: the edited B becomes the chat's reply and the pair is saved.
  auto click = [&](QQuickItem* item) {
    QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                      item->mapToScene(QPointF(item->width() / 2, item->height() / 2)).toPoint());
  };
  click(findVisibleItem(panel, QStringLiteral("compareEditB")));
  QTRY_VERIFY(textB->hasActiveFocus());
  QVERIFY(!textB->property("readOnly").toBool());
  const QString edited = controller->compareAlternative() + QStringLiteral(" (edited)");
  QVERIFY(textB->setProperty("text", edited));
  grab(QStringLiteral("chat-compare-editing"));
  click(keepB);
  QTRY_VERIFY(!controller->comparing());
  QVERIFY2(controller->lastError().isEmpty(), qPrintable(controller->lastError()));
  QCOMPARE(controller->messages()->rows().constLast().message.content, edited);
  QTRY_VERIFY(findVisibleItem(chat, QStringLiteral("chatInput")));
  QCOMPARE(prefs->count(), pairsBefore + 1);
  const QVariantMap pair = prefs->pairs().first().toMap();
  QCOMPARE(pair.value(QStringLiteral("chosen")).toString(), edited);
  QCOMPARE(pair.value(QStringLiteral("rejected")).toString(), original);
  QVERIFY(pair.value(QStringLiteral("edited")).toBool());

  // The Train page lists the pair; the export is a dataset the trainer reads.
  QVERIFY(m_window->setProperty("currentPage", 3));
  QQuickItem* train = page(QStringLiteral("train"));
  QTRY_VERIFY(train->isVisible());
  QQuickItem* card = findItem(train, QStringLiteral("preferencePairsCard"));
  QVERIFY(card);
  QTRY_VERIFY(findVisibleItem(card, QStringLiteral("preferencePair")));
  QVERIFY(findItem(card, QStringLiteral("exportPreferencesButton"))->isEnabled());
  // Scrolled to the card, as a user would.
  QQuickItem* flick = nullptr;
  for (QQuickItem* child : train->childItems())
    if (child->inherits("QQuickScrollView")) flick = child->property("contentItem").value<QQuickItem*>();
  QVERIFY(flick);
  QVERIFY(flick->setProperty("contentY", qMax(0.0, flick->property("contentHeight").toDouble() - flick->height())));
  grab(QStringLiteral("train-preference-pairs"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QTest::qWait(200);
  grab(QStringLiteral("train-preference-pairs-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  const QString out = m_dir.filePath(QStringLiteral("preferences.jsonl"));
  QCOMPARE(prefs->exportJsonl(out), QString());
  const engine::PreferenceDataset data = engine::load_preference_dataset(out.toStdString());
  QCOMPARE(int(data.pairs.size()), pairsBefore + 1);
  QCOMPARE(QString::fromStdString(data.pairs.front().chosen), edited);
  QCOMPARE(data.pairs.front().prompt.back().role, std::string("user"));
  // Exported through the card, the file goes straight to the fine-tuning wizard's dataset step.
  QVERIFY(QMetaObject::invokeMethod(card, "exportTo", Q_ARG(QVariant, out)));
  QQuickItem* trainButton = findItem(card, QStringLiteral("preferenceTrainButton"));
  QVERIFY(trainButton);
  QTRY_VERIFY(trainButton->isVisible());
  QVERIFY(QMetaObject::invokeMethod(trainButton, "clicked"));
  QQuickItem* wizard = findItem(train, QStringLiteral("trainWizard"));
  QTRY_VERIFY(wizard->isVisible());
  QCOMPARE(wizard->property("dataPath").toString(), out);
  QVERIFY(train->setProperty("showSetup", false));

  QVERIFY(m_window->setProperty("currentPage", 0));
  controller->setGenerationSettings(settingsBefore);
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

// A reward model chosen for the chat (the setting, as the Reward model popup sets it): a reply's Score
// action shows its score beside it, and a comparison shows both scores and the one preferred.
void TestUiSmoke::chatScoresRepliesWithARewardModel() {
  m_warnings.clear();
  QVERIFY2(m_controller->hasModel() && m_controller->modelHasTokenizer(), qPrintable(m_controller->lastError()));
  QVERIFY(m_window->setProperty("currentPage", 0));
  QQuickItem* chat = page(QStringLiteral("chat"));
  QTRY_VERIFY(chat->isVisible());
  ChatController* controller = m_controller->chat();
  const QVariantMap settingsBefore = controller->generationSettings();
  controller->setGenerationSettings({{QStringLiteral("temperature"), 0.9},
                                     {QStringLiteral("maxTokens"), 24},
                                     {QStringLiteral("logitBias"), QString()}});
  const QString rewardDir = m_dir.filePath(QStringLiteral("tiny-reward"));
  writeTinyRewardModel(rewardDir, 31, 1024);
  m_controller->settings()->setRewardModelPath(rewardDir);
  QTRY_VERIFY_WITH_TIMEOUT(m_controller->rewards()->ready(), 20000);
  QCOMPARE(controller->rewardModelName(), QStringLiteral("tiny-reward"));
  QCOMPARE(findItem(chat, QStringLiteral("rewardModelButton"))->property("text").toString(),
           QStringLiteral("Scoring with tiny-reward"));

  QVERIFY(controller->newChat());
  QVERIFY(controller->send(QStringLiteral("Which is better for a rainy afternoon, tea or coffee?")));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QTRY_VERIFY(findVisibleItem(chat, QStringLiteral("action_score")));
  auto click = [&](QQuickItem* item) {
    QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                      item->mapToScene(QPointF(item->width() / 2, item->height() / 2)).toPoint());
  };
  // The reply's row is appended and laid out at the next polish: a click computed before that may miss the
  // button, so click again until the score is asked for (a second request for the same reply is harmless).
  for (int attempt = 0; attempt < 5 && !findVisibleItem(chat, QStringLiteral("rewardBadge")); ++attempt) {
    QTest::qWait(100);
    if (QQuickItem* score = findVisibleItem(chat, QStringLiteral("action_score"))) click(score);
    QTest::qWait(200);
  }
  QTRY_VERIFY_WITH_TIMEOUT(findVisibleItem(chat, QStringLiteral("rewardBadge")), 20000);
  QQuickItem* badge = findVisibleItem(chat, QStringLiteral("rewardBadge"));
  QTRY_VERIFY_WITH_TIMEOUT(badge->property("label").toString().startsWith(QLatin1Char('+')) ||
                               badge->property("label").toString().startsWith(QLatin1Char('-')),
                           20000);
  QVERIFY2(controller->lastError().isEmpty(), qPrintable(controller->lastError()));
  grab(QStringLiteral("chat-reward-score"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QTest::qWait(200);
  grab(QStringLiteral("chat-reward-score-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));

  // The reward model popup: the chosen model and where to choose another.
  click(findItem(chat, QStringLiteral("rewardModelButton")));
  QTRY_VERIFY(findVisibleItem(m_window->contentItem(), QStringLiteral("rewardModelState")));
  QTest::qWait(300);
  grab(QStringLiteral("chat-reward-popup"));
  QTest::keyClick(m_window, Qt::Key_Escape);

  // Compare: both replies scored, side by side, the preferred one marked.
  QTRY_VERIFY(!findVisibleItem(m_window->contentItem(), QStringLiteral("rewardModelState")));
  m_window->requestActivate();
  QTest::keyClick(m_window, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
  QTRY_VERIFY2(controller->comparing(), qPrintable(controller->lastError()));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QQuickItem* panel = findItem(chat, QStringLiteral("comparePanel"));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->compareAlternativeScore().value(QStringLiteral("text")).toString().isEmpty(),
                           20000);
  QVERIFY(!controller->compareOriginalScore().value(QStringLiteral("text")).toString().isEmpty());
  QVERIFY(findVisibleItem(panel, QStringLiteral("compareScoreA")));
  QVERIFY(findVisibleItem(panel, QStringLiteral("compareScoreB")));
  QVERIFY(findVisibleItem(panel, QStringLiteral("compareRewardVerdict")));
  grab(QStringLiteral("chat-compare-scores"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  QTest::qWait(200);
  grab(QStringLiteral("chat-compare-scores-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  controller->dismissComparison();

  m_controller->settings()->setRewardModelPath(QString());
  QTRY_VERIFY(controller->rewardModelName().isEmpty());
  QVERIFY(!findVisibleItem(chat, QStringLiteral("rewardBadge")));
  controller->setGenerationSettings(settingsBefore);
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::presetsAndRecentModels() {
  m_warnings.clear();
  // Presets saved through App reach the Playground's preset box; choosing one sets the knobs.
  QVERIFY(m_window->setProperty("currentPage", 1));
  QQuickItem* playground = page(QStringLiteral("playground"));
  QQuickItem* box = findItem(playground, QStringLiteral("presetBox"));
  QVERIFY(box);
  const int before = box->property("count").toInt();
  QVERIFY(m_controller->savePreset(QStringLiteral("Exact"),
                                   {{QStringLiteral("temperature"), 0.0}, {QStringLiteral("topK"), 1}}));
  QTRY_COMPARE(box->property("count").toInt(), before + 1);
  QQuickItem* temperature = findItem(playground, QStringLiteral("temperatureSlider"));
  QVERIFY(temperature);
  QVERIFY(QMetaObject::invokeMethod(box, "activated", Q_ARG(int, before)));
  QTRY_COMPARE(temperature->property("value").toDouble(), 0.0);
  QVERIFY(m_controller->deletePreset(QStringLiteral("Exact")));
  QTRY_COMPARE(box->property("count").toInt(), before);

  // Every model opened in this run is listed on the Models page, the open one marked.
  const QVariantList recent = m_controller->recentModels();
  QVERIFY(recent.size() >= 2);
  QCOMPARE(recent.first().toMap().value(QStringLiteral("path")).toString(), m_controller->modelPath());
  QVERIFY(recent.first().toMap().value(QStringLiteral("current")).toBool());
  QVERIFY(m_window->setProperty("currentPage", 5));
  QQuickItem* card = findItem(page(QStringLiteral("models")), QStringLiteral("recentModelsCard"));
  QVERIFY(card && card->isVisible());
  QTest::qWait(200);
  grab(QStringLiteral("models-recent"));
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::chatSearchTagsAndMessageUndo() {
  m_warnings.clear();
  QVERIFY(m_window->setProperty("currentPage", 0));
  QQuickItem* chat = page(QStringLiteral("chat"));
  QTRY_VERIFY(chat->isVisible());
  ChatController* controller = m_controller->chat();
  controller->setGenerationSettings({{QStringLiteral("maxTokens"), 4}});

  // A long chat whose first message holds a rare word: the search hit scrolls up to it.
  controller->newChat();
  QVERIFY(controller->send(QStringLiteral("The quetzal is a colourful bird")));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  for (int i = 0; i < 6; ++i) {
    QVERIFY(controller->send(QStringLiteral("Tell me more, part %1, with a few more words to fill the screen").arg(i)));
    QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  }
  const qint64 birds = controller->currentChatId();
  controller->setChatTags(birds, QStringLiteral("birds, nature"));
  controller->newChat();
  QVERIFY(controller->send(QStringLiteral("Something else entirely")));
  QTRY_VERIFY_WITH_TIMEOUT(!controller->generating(), 60000);
  QQuickItem* list = findItem(chat, QStringLiteral("messageList"));
  QVERIFY(list);

  auto* search = findItem(chat, QStringLiteral("chatSearchField"));
  QVERIFY(search->setProperty("text", QStringLiteral("quetzal")));
  QTRY_COMPARE(controller->searchText(), QStringLiteral("quetzal"));
  QQuickItem* chatList = findItem(chat, QStringLiteral("chatList"));
  QTRY_VERIFY(controller->chats()->rowCount() >= 1);
  int hitRow = -1;
  for (int i = 0; i < controller->chats()->rowCount() && hitRow < 0; ++i)
    if (controller->chats()->data(controller->chats()->index(i), ChatListModel::MessageIdRole).toLongLong() != 0)
      hitRow = i;
  QVERIFY(hitRow >= 0);
  QTest::qWait(200);
  // Click the hit in the sidebar, as the user does.
  QQuickItem* row = nullptr;
  QVERIFY(QMetaObject::invokeMethod(chatList, "itemAtIndex", Q_RETURN_ARG(QQuickItem*, row), Q_ARG(int, hitRow)));
  QVERIFY(row);
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    row->mapToScene(QPointF(row->width() / 3, row->height() / 2)).toPoint());
  QTRY_COMPARE(controller->currentChatId(), birds);
  QCOMPARE(controller->highlightedRow(), 0);
  // The list shows the first message (scrolled up from the end), highlighted.
  QTRY_VERIFY(findVisibleItem(list, QStringLiteral("searchHighlight")) != nullptr);
  QQuickItem* highlight = findVisibleItem(list, QStringLiteral("searchHighlight"));
  const QRectF inList = highlight->mapRectToItem(list, QRectF(0, 0, highlight->width(), highlight->height()));
  QVERIFY2(inList.bottom() > 0 && inList.top() < list->height(),
           qPrintable(
               QStringLiteral("highlight at %1..%2 of %3").arg(inList.top()).arg(inList.bottom()).arg(list->height())));
  QTest::qWait(300);
  grab(QStringLiteral("chat-search-hit"));
  QVERIFY(search->setProperty("text", QString()));
  QTRY_VERIFY(controller->searchText().isEmpty());

  // Tag chips filter the sidebar.
  QQuickItem* chip = nullptr;
  QTRY_VERIFY((chip = findItem(chat, QStringLiteral("tagChip_birds"))) && chip->isVisible());
  QTest::qWait(200);  // laid out after the search field cleared
  const int allChats = controller->chats()->rowCount();
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    chip->mapToScene(QPointF(chip->width() / 2, chip->height() / 2)).toPoint());
  QTRY_COMPARE(controller->tagFilter(), QStringLiteral("birds"));
  QCOMPARE(controller->chats()->rowCount(), 1);
  QTest::qWait(200);
  grab(QStringLiteral("chat-tag-filter"));
  auto* clear = findItem(chat, QStringLiteral("clearTagFilter"));
  QVERIFY(clear && clear->isVisible());
  QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                    clear->mapToScene(QPointF(clear->width() / 2, clear->height() / 2)).toPoint());
  QTRY_VERIFY(controller->tagFilter().isEmpty());
  QCOMPARE(controller->chats()->rowCount(), allChats);

  // Deleting a message shows the undo banner; Ctrl+Z brings the message back.
  const int count = controller->messages()->rowCount();
  const qint64 last = controller->messages()->rowAt(count - 2).message.id;
  controller->deleteMessage(last);
  QCOMPARE(controller->messages()->rowCount(), count - 2);
  auto* undo = findItem(chat, QStringLiteral("undoBanner"));
  QTRY_VERIFY(undo->isVisible());
  QVERIFY(findItem(chat, QStringLiteral("undoText"))
              ->property("text")
              .toString()
              .startsWith(QStringLiteral("Deleted a message")));
  grab(QStringLiteral("chat-message-undo"));
  m_window->requestActivate();
  chat->forceActiveFocus();
  QTest::keySequence(m_window, QKeySequence::Undo);
  QTRY_COMPARE(controller->messages()->rowCount(), count);
  QCOMPARE(controller->messages()->rowAt(count - 2).message.id, last);
  QTRY_VERIFY(!undo->isVisible());
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

QTEST_MAIN(TestUiSmoke)
#include "test_ui_smoke.moc"

void TestUiSmoke::modelCardAndEvaluation() {
  m_warnings.clear();
  // A model whose recipe wrote a card: the Models page shows it, evals included, in both themes.
  const QString path = m_dir.filePath(QStringLiteral("carded-model"));
  writeTinyTextModel(path);
  const QByteArray workbench = R"({"created_by": "test", "recipe": {"steps": 3},
    "card": {"title": "Starter: a tiny chat model", "summary": "Answers questions about its own small world and adds numbers.",
             "trained_on": ["2,000 generated stories", "3,000 chat dialogues"],
             "limitations": "A toy that knows only its own small world."},
    "evals": {"chat": {"task": "chat", "n": 100, "correct": 97, "accuracy": 0.97,
                       "categories": {"stops": {"n": 100, "correct": 98, "accuracy": 0.98},
                                      "in_template": {"n": 100, "correct": 99, "accuracy": 0.99}}},
              "arith": {"task": "arith", "n": 100, "correct": 91, "accuracy": 0.91,
                        "categories": {"add_2d": {"n": 30, "correct": 29, "accuracy": 0.9667},
                                       "mul_1d": {"n": 10, "correct": 6, "accuracy": 0.6}}}}})";
  QFile f(path + QStringLiteral("/workbench.json"));
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(workbench);
  f.close();
  m_controller->openModel(path);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 20000);
  QCOMPARE(m_controller->modelPath(), path);
  QVERIFY(m_window->setProperty("currentPage", 5));
  QQuickItem* models = page(QStringLiteral("models"));
  QQuickItem* card = findItem(models, QStringLiteral("modelCard"));
  QVERIFY(card);
  QTRY_VERIFY(card->isVisible());
  QCOMPARE(card->property("title").toString(), QStringLiteral("Starter: a tiny chat model"));
  QQuickItem* evals = findItem(card, QStringLiteral("modelCardEvals"));
  QVERIFY(evals);
  // Arithmetic first, whatever the file's order.
  const QVariantList rows = evals->property("rows").toList();
  QCOMPARE(rows.size(), 2);
  QCOMPARE(rows[0].toMap().value(QStringLiteral("task")).toString(), QStringLiteral("arith"));
  QQuickItem* arith = findItem(evals, QStringLiteral("evalRow_arith"));
  QVERIFY(arith);
  QCOMPARE(findItem(arith, QStringLiteral("evalAccuracy"))->property("text").toString(), QStringLiteral("91 %"));
  // Scrolled so that the card is in view for the screenshots.
  QQuickItem* flickable = card->parentItem();
  while (flickable && !flickable->inherits("QQuickFlickable")) flickable = flickable->parentItem();
  QVERIFY(flickable);
  const QQuickItem* content = flickable->property("contentItem").value<QQuickItem*>();
  QVERIFY(content);
  QVERIFY(flickable->setProperty("contentY", card->mapToItem(content, QPointF(0, 0)).y() - 80));
  grab(QStringLiteral("models-card"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("models-card-dark"));

  // Evaluate runs in the background with progress and shows its results.
  QObject* evaluator = models->findChild<QObject*>(QStringLiteral("modelEvaluator"));
  QVERIFY(evaluator);
  QVERIFY(evaluator->setProperty("items", 3));
  QQuickItem* button = findItem(models, QStringLiteral("evaluateButton"));
  QVERIFY(button && button->isEnabled());
  QVERIFY(QMetaObject::invokeMethod(button, "clicked"));
  QVERIFY(evaluator->property("busy").toBool());
  QTRY_VERIFY_WITH_TIMEOUT(!evaluator->property("busy").toBool(), 60000);
  QCOMPARE(evaluator->property("error").toString(), QString());
  QQuickItem* results = findItem(models, QStringLiteral("evaluationResults"));
  QVERIFY(results);
  QTRY_VERIFY(results->isVisible());
  QCOMPARE(results->property("rows").toList().size(), 3);
  QVERIFY(findItem(results, QStringLiteral("evalRow_chat")));
  QTest::qWait(100);  // the results grow the page; let the layout settle
  grab(QStringLiteral("models-evaluated-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  grab(QStringLiteral("models-evaluated"));

  // A model without a card shows none, and the last model's results go with it.
  const QString plain = m_dir.filePath(QStringLiteral("tiny-text"));
  QVERIFY(QFileInfo::exists(plain));
  m_controller->openModel(plain);
  QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading(), 20000);
  QTRY_VERIFY(!card->isVisible());
  QVERIFY(!results->isVisible());
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}

void TestUiSmoke::serverPageServesAndLogs() {
  m_warnings.clear();
  // The Server page over the model loaded in the app: a key created and shown once, the server started from
  // the page, a real request in its log and counters, both themes, then stopped.
  QVERIFY(m_controller->hasModel());
  ServerService* server = m_controller->server();
  server->setPort(0);  // any free port: the test must not collide with a real server on 8080
  QVERIFY(m_window->setProperty("currentPage", 6));
  QQuickItem* page = this->page(QStringLiteral("server"));
  QTRY_VERIFY(page->isVisible());
  QCOMPARE(server->appModelPath(), m_controller->modelPath());
  QCOMPARE(findItem(page, QStringLiteral("serverStateLabel"))->property("text").toString(), QStringLiteral("Stopped"));
  QVERIFY(findItem(page, QStringLiteral("serverNoKeyNote"))->isVisible());
  grab(QStringLiteral("server-stopped"));

  auto click = [&](QQuickItem* item) {
    QVERIFY(item && item->isVisible() && item->isEnabled());
    QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                      item->mapToScene(QPointF(item->width() / 2, item->height() / 2)).toPoint());
  };
  QVERIFY(findItem(page, QStringLiteral("newKeyName"))->setProperty("text", QStringLiteral("smoke test")));
  QVERIFY(QMetaObject::invokeMethod(findItem(page, QStringLiteral("createKeyButton")), "clicked"));  // below the fold
  QTRY_VERIFY(findItem(page, QStringLiteral("newKeyBox"))->isVisible());
  const QString key = findItem(page, QStringLiteral("newKeyText"))->property("text").toString();
  QVERIFY(key.startsWith(QStringLiteral("sk-wb-")));
  QCOMPARE(server->keys().size(), 1);
  QVERIFY(!findItem(page, QStringLiteral("serverNoKeyNote"))->isVisible());
  grab(QStringLiteral("server-new-key"));

  click(findItem(page, QStringLiteral("serverStartStopButton")));
  QTRY_VERIFY2_WITH_TIMEOUT(server->running(), qPrintable(server->error()), 30000);
  QTRY_VERIFY(findItem(page, QStringLiteral("serverUrl"))->isVisible());
  QCOMPARE(findItem(page, QStringLiteral("serverUrl"))->property("text").toString(), server->url() + QStringLiteral("/v1"));

  QNetworkAccessManager net;
  QNetworkRequest request(QUrl(server->url() + QStringLiteral("/v1/completions")));
  request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  request.setRawHeader("Authorization", "Bearer " + key.toUtf8());
  QNetworkReply* reply = net.post(request, R"({"prompt": "The", "max_tokens": 6})");
  QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), 30000);
  QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
  reply->deleteLater();
  QTRY_COMPARE(server->requestLog()->rowCount(), 1);
  QTRY_COMPARE(findItem(page, QStringLiteral("statRequestsValue"))->property("text").toString(), QStringLiteral("1"));
  QQuickItem* log = findItem(page, QStringLiteral("requestLogList"));
  QTRY_VERIFY(log->isVisible());
  QTest::qWait(600);  // the counters' next report
  grab(QStringLiteral("server-running"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("server-running-dark"));

  // Scrolled down: the log and the examples.
  QQuickItem* flickable = log->parentItem();
  while (flickable && !flickable->inherits("QQuickFlickable")) flickable = flickable->parentItem();
  QVERIFY(flickable);
  QVERIFY(flickable->setProperty("contentY", flickable->property("contentHeight").toDouble() - flickable->height()));
  QVERIFY(server->curlExample().contains(server->url()));
  grab(QStringLiteral("server-log-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  grab(QStringLiteral("server-log"));
  QVERIFY(flickable->setProperty("contentY", 0));

  click(findItem(page, QStringLiteral("serverStartStopButton")));
  QTRY_VERIFY_WITH_TIMEOUT(server->state() == QLatin1String("stopped"), 30000);
  QVERIFY(!findItem(page, QStringLiteral("serverUrl"))->isVisible());

  // Every network: the page says so.
  server->setHost(QStringLiteral("0.0.0.0"));
  QTRY_VERIFY(findItem(page, QStringLiteral("serverExposureWarning"))->isVisible());
  grab(QStringLiteral("server-exposed"));
  m_controller->settings()->setTheme(QStringLiteral("dark"));
  grab(QStringLiteral("server-exposed-dark"));
  m_controller->settings()->setTheme(QStringLiteral("light"));
  server->resetSettings();
  QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
}
