// The Train and Runs pages in the real Main.qml with the real AppController: a walk through the
// new-run form (model, data, method, steps, the CLI command it shows, start) runs a real tiny
// training job; the dashboard then shows its curves (series filled from the stored rows), its
// status, samples and stat tiles; the log-scale toggle keeps the curve; the Runs page overlays it.
// Set WB_SCREENSHOT_DIR to keep PNGs of the pages.
#include <QAbstractAxis>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLegend>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QXYSeries>
#include <QtQml/qqmlextensionplugin.h>

#include <memory>

#include "appsingleton.h"
#include "engine/model_loader.h"
#include "metricsmodel.h"
#include "services/appcontroller.h"
#include "services/trainingjobs.h"
#include "support/training_job_fixture.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

namespace {

QQuickItem* findItem(QQuickItem* root, const QString& objectName) {
  if (root->objectName() == objectName) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, objectName)) return found;
  return nullptr;
}

}  // namespace

class TestTrainPage : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QStringList m_warnings;
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<QQmlApplicationEngine> m_engine;
  QQuickWindow* m_window = nullptr;
  QString m_model, m_data;

  void grab(const QString& name) {
    QTest::qWait(300);
    const QImage image = m_window->grabWindow();
    QVERIFY(!image.isNull());
    const QString dir = qEnvironmentVariable("WB_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
      QDir().mkpath(dir);
      image.save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
    }
  }
  void showPage(int index) {
    QVERIFY(m_window->setProperty("currentPage", index));
    QTest::qWait(50);
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(m_dir.isValid());
    qputenv("WB_DATA_DIR", m_dir.filePath(QStringLiteral("share")).toUtf8());
    qputenv("WB_SESSION_DB", m_dir.filePath(QStringLiteral("session.db")).toUtf8());
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
      QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    QQuickStyle::setStyle(QStringLiteral("Material"));

    m_model = m_dir.filePath(QStringLiteral("model"));
    writeTinyGpt2WithTokenizer(m_model);
    m_data = m_dir.filePath(QStringLiteral("stories.txt"));
    QVERIFY(writeStories(m_data, 200));

    m_controller = std::make_unique<AppController>();
    AppControllerForeign::setInstance(m_controller.get());
    m_controller->training()->setRunsRoot(m_dir.filePath(QStringLiteral("runs")));
    m_engine = std::make_unique<QQmlApplicationEngine>();
    m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    connect(m_engine.get(), &QQmlEngine::warnings, this, [this](const QList<QQmlError>& list) {
      for (const auto& w : list) m_warnings << w.toString();
    });
    m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/Workbench/Ui/Main.qml")));
    QVERIFY2(!m_engine->rootObjects().isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
    m_window = qobject_cast<QQuickWindow*>(m_engine->rootObjects().constFirst());
    QVERIFY(m_window);
    m_window->resize(1280, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_controller->start();
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }

  void cleanupTestCase() {
    m_engine.reset();
    m_controller.reset();
  }

  void emptyTrainPageRenders() {
    showPage(3);
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QVERIFY(page);
    QTRY_VERIFY(page->isVisible());
    QVERIFY(findItem(page, QStringLiteral("trainSetup")));
    grab(QStringLiteral("train-empty"));
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }

  void walkThroughStartsARunAndTheDashboardFollowsIt() {
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QQuickItem* setup = findItem(page, QStringLiteral("trainSetup"));
    QVERIFY(setup);
    // Model → data → method → hyper-parameters.
    QVERIFY(findItem(setup, QStringLiteral("setupModel"))->setProperty("text", m_model));
    QVERIFY(findItem(setup, QStringLiteral("setupData"))->setProperty("text", m_data));
    QVERIFY(findItem(setup, QStringLiteral("setupSteps"))->setProperty("value", 12));
    QVERIFY(findItem(setup, QStringLiteral("setupLr"))->setProperty("text", QStringLiteral("0.003")));
    QVariantMap s = setup->property("settings").toMap();
    s[QStringLiteral("seq")] = 32;
    s[QStringLiteral("batch")] = 2;
    s[QStringLiteral("val_every")] = 4;
    s[QStringLiteral("sample_every")] = 6;
    s[QStringLiteral("save_every")] = 0;
    s[QStringLiteral("val_fraction")] = 0.1;
    s[QStringLiteral("sample_prompt")] = QStringLiteral("Tom saw");
    s[QStringLiteral("sample_tokens")] = 6;
    // Review: the command shown names the same run.
    const QString cli = findItem(setup, QStringLiteral("setupCli"))->property("text").toString();
    QVERIFY2(cli.contains(QStringLiteral("--recipe pretrain --model ") + m_model + QStringLiteral(" --data ") + m_data),
             qPrintable(cli));
    QVERIFY2(cli.contains(QStringLiteral("--steps 12")) && cli.contains(QStringLiteral("--lr 0.003")), qPrintable(cli));
    QVERIFY(findItem(setup, QStringLiteral("startButton"))->property("enabled").toBool());

    // Start (with the smaller shapes of this test; the form's own start() is the same call).
    QSignalSpy finished(m_controller->training(), &TrainingJobs::runFinished);
    QVERIFY(QMetaObject::invokeMethod(setup, "startRequested", Q_ARG(QString, QStringLiteral("walk-through")),
                                      Q_ARG(QVariant, s)));
    QVERIFY(m_controller->training()->busy());
    const qint64 id = m_controller->training()->activeRunId();
    QTRY_COMPARE(findItem(page, QStringLiteral("runStatus"))->property("text").toString(), QStringLiteral("running"));
    QVERIFY(finished.wait(240000));
    QCOMPARE(finished.first()[1].toString(), QStringLiteral("done"));
    QTRY_COMPARE(findItem(page, QStringLiteral("runStatus"))->property("text").toString(), QStringLiteral("done"));

    // The dashboard's charts hold the run's points.
    QQuickItem* loss = findItem(page, QStringLiteral("lossChart"));
    QVERIFY(loss);
    auto* metrics = qvariant_cast<MetricsModel*>(loss->property("metrics"));
    QVERIFY(metrics);
    QCOMPARE(metrics->runId(), id);
    QCOMPARE(metrics->count(), 12);
    QObject* chart = qvariant_cast<QObject*>(loss->property("chart"));
    QVERIFY(chart);
    QTRY_COMPARE(chart->property("count").toInt(), 3);
    const auto firstSeries = [chart]() -> QXYSeries* {
      QAbstractSeries* s = nullptr;
      if (!QMetaObject::invokeMethod(chart, "series", Q_RETURN_ARG(QAbstractSeries*, s), Q_ARG(int, 0))) return nullptr;
      return qobject_cast<QXYSeries*>(s);
    };
    QXYSeries* train = firstSeries();
    QVERIFY(train);
    QTRY_COMPARE(train->count(), 12);
    QCOMPARE(train->at(0).y(), m_controller->training()->store()->metrics(id).first().loss);
    QVERIFY(metrics->samples().size() == 2);
    grab(QStringLiteral("train-dashboard"));

    // The charts follow the theme: axis labels and titles, axis lines, grid and legend take Style's
    // chart colours (Qt Charts' own theme would keep light-theme text on the dark background).
    // (A theme change recolours the specs, and the chart makes its series anew: ask for them each time.)
    const auto axisOf = [chart, &firstSeries](const char* which) {
      QAbstractAxis* a = nullptr;
      QAbstractSeries* series = firstSeries();
      if (series)
        QMetaObject::invokeMethod(chart, which, Q_RETURN_ARG(QAbstractAxis*, a), Q_ARG(QAbstractSeries*, series));
      return a;
    };
    const auto chartColoursAre = [&](const QColor& label, const QColor& line, const QColor& grid) {
      for (const char* which : {"axisX", "axisY"}) {
        QAbstractAxis* a = axisOf(which);
        if (!a || a->labelsColor() != label || a->titleBrush().color() != label || a->linePenColor() != line ||
            a->gridLineColor() != grid || a->shadesVisible())
          return false;
      }
      auto* legend = qvariant_cast<QLegend*>(chart->property("legend"));
      return legend && legend->labelColor() == label;
    };
    QVERIFY(axisOf("axisX") && axisOf("axisX")->titleText() == QStringLiteral("step"));
    QVERIFY(chartColoursAre(QColor("#5e6573"), QColor("#c3c8d2"), QColor("#dfe2e8")));  // light
    m_controller->settings()->setTheme(QStringLiteral("dark"));
    QTRY_VERIFY(chartColoursAre(QColor("#9aa1ad"), QColor("#4a505b"), QColor("#30343c")));
    grab(QStringLiteral("train-dashboard-dark"));
    m_controller->settings()->setTheme(QStringLiteral("light"));
    QTRY_VERIFY(chartColoursAre(QColor("#5e6573"), QColor("#c3c8d2"), QColor("#dfe2e8")));

    // Log scale: the same points on a log axis.
    QQuickItem* log = findItem(page, QStringLiteral("logToggle"));
    QVERIFY(log->setProperty("checked", true));
    QTRY_COMPARE(chart->property("count").toInt(), 3);
    train = firstSeries();
    QVERIFY(train);
    QTRY_COMPARE(train->count(), 12);
    grab(QStringLiteral("train-dashboard-log"));
    QVERIFY(log->setProperty("checked", false));

    // The Runs page lists it; ticking it overlays its curve.
    showPage(4);
    QQuickItem* runsPage = m_window->findChild<QQuickItem*>(QStringLiteral("page_runs"));
    QTRY_VERIFY(runsPage->isVisible());
    QObject* runs = runsPage->findChild<QObject*>(QStringLiteral("runsModel"));
    QVERIFY(runs);
    QCOMPARE(runs->property("count").toInt(), 1);
    QVERIFY(QMetaObject::invokeMethod(runs, "setSelected", Q_ARG(qint64, id), Q_ARG(bool, true)));
    QQuickItem* overlay = findItem(runsPage, QStringLiteral("overlayChart"));
    QVERIFY(overlay);
    QTRY_COMPARE(overlay->property("count").toInt(), 1);
    grab(QStringLiteral("runs-overlay"));
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }
};

QTEST_MAIN(TestTrainPage)
#include "test_train_page.moc"
