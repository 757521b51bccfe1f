// The Train and Runs pages in the real Main.qml with the real AppController: a walk through the
// new-run form (model, data, method, steps, the CLI command it shows, start) runs a real tiny
// training job; the dashboard then shows its curves (series filled from the stored rows), its
// status, samples and stat tiles; the log-scale toggle keeps the curve; the Runs page overlays it.
// A run started from the wizard keeps the wizard open on its Run step (Evaluate and Save follow); the
// tuned model opens under the run's name; a chat fine-tune's samples answer a chat prompt; the Runs
// page lists base model, method and final loss, and deletes a run with its folder. An alignment run (stored
// PPO and DPO metrics) shows the alignment dashboard: a chart per key metric with its healthy band, the health
// warnings its curves call for, and the sampled completions newest first; a pretrain run does not.
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
#include <QValueAxis>
#include <QXYSeries>
#include <QtQml/qqmlextensionplugin.h>

#include <cmath>
#include <functional>
#include <memory>

#include "appsingleton.h"
#include "engine/model_loader.h"
#include "metricsmodel.h"
#include "services/appcontroller.h"
#include "services/trainingjobs.h"
#include "support/quick_items.h"
#include "support/training_job_fixture.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

class TestTrainPage : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QStringList m_warnings;
  std::unique_ptr<AppController> m_controller;
  std::unique_ptr<QQmlApplicationEngine> m_engine;
  QQuickWindow* m_window = nullptr;
  QString m_model, m_data, m_chats;

  // A run small enough for a few seconds of training.
  QVariantMap smallRun() const {
    return {{QStringLiteral("recipe"), QStringLiteral("pretrain")},
            {QStringLiteral("model"), m_model},
            {QStringLiteral("data"), m_data},
            {QStringLiteral("steps"), 4},
            {QStringLiteral("lr"), 0.003},
            {QStringLiteral("seq"), 24},
            {QStringLiteral("batch"), 2},
            {QStringLiteral("val_every"), 0},
            {QStringLiteral("save_every"), 0}};
  }

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
    m_chats = m_dir.filePath(QStringLiteral("chats.jsonl"));
    {
      QFile f(m_chats);
      QVERIFY(f.open(QIODevice::WriteOnly));
      for (int i = 0; i < 40; ++i)
        f.write(QStringLiteral("{\"messages\":[{\"role\":\"user\",\"content\":\"Who saw the %1?\"},"
                               "{\"role\":\"assistant\",\"content\":\"Tom saw the %1.\"}]}\n")
                    .arg(i % 2 ? QStringLiteral("ball") : QStringLiteral("cat"))
                    .toUtf8());
    }

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

  // The dashboard's MetricChart cards (loss, learning rate, gradient norm, throughput).
  QList<QQuickItem*> chartCards(QQuickItem* page) {
    QList<QQuickItem*> out;
    std::function<void(QQuickItem*)> walk = [&](QQuickItem* item) {
      if (item->property("specs").isValid() && item->property("chart").isValid()) out << item;
      for (QQuickItem* child : item->childItems()) walk(child);
    };
    walk(page);
    return out;
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
    // No run yet: the new-run wizard is open, and the empty charts say so instead of showing axes.
    QVERIFY(findItem(page, QStringLiteral("trainWizard"))->isVisible());
    QQuickItem* loss = findItem(page, QStringLiteral("lossChart"));
    QVERIFY(loss && loss->property("empty").toBool());
    QQuickItem* emptyText = findItem(loss, QStringLiteral("chartEmptyText"));
    QVERIFY(emptyText && emptyText->isVisible());
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

    // Axes read as people write numbers: round steps, no exponent, nothing below zero for a metric
    // that cannot be negative (the learning rate decays towards zero).
    QVERIFY(!loss->property("empty").toBool());
    for (QQuickItem* chartCard : chartCards(page)) {
      QObject* c = qvariant_cast<QObject*>(chartCard->property("chart"));
      QAbstractSeries* series = nullptr;
      QVERIFY(QMetaObject::invokeMethod(c, "series", Q_RETURN_ARG(QAbstractSeries*, series), Q_ARG(int, 0)));
      QAbstractAxis* y = nullptr;
      QVERIFY(QMetaObject::invokeMethod(c, "axisY", Q_RETURN_ARG(QAbstractAxis*, y), Q_ARG(QAbstractSeries*, series)));
      auto* axis = qobject_cast<QValueAxis*>(y);
      QVERIFY(axis);
      QVERIFY2(axis->min() >= 0, qPrintable(QString::number(axis->min())));
      QVERIFY2(!axis->labelFormat().contains(QLatin1Char('g')) && !axis->labelFormat().contains(QLatin1Char('e')),
               qPrintable(axis->labelFormat()));
      QCOMPARE(axis->tickType(), QValueAxis::TicksDynamic);
    }

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

  void wizardStaysWithItsRun() {
    showPage(3);
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QQuickItem* wizard = findItem(page, QStringLiteral("trainWizard"));
    QVERIFY(wizard);
    QVERIFY(page->setProperty("guided", true));
    QVERIFY(page->setProperty("showSetup", true));
    QTRY_VERIFY(wizard->isVisible());

    // A new step starts at the top of the page, wherever the last one was scrolled to.
    QObject* flick = nullptr;
    for (QQuickItem* item = wizard; item && !flick; item = item->parentItem())
      if (item->inherits("QQuickFlickable")) flick = item;
    QVERIFY(flick);
    QVERIFY(flick->setProperty("contentY", 300.0));
    QVERIFY(wizard->setProperty("step", 1));
    QCOMPARE(flick->property("contentY").toDouble(), 0.0);

    // Start: the run is enqueued and the wizard stays open with it (it used to vanish with the
    // first run, taking its Evaluate and Save steps along).
    QVERIFY(wizard->setProperty("step", 4));
    QVariantMap s = smallRun();
    s[QStringLiteral("recipe")] = QStringLiteral("sft");
    s[QStringLiteral("data")] = m_chats;
    s[QStringLiteral("sample_every")] = 2;
    s[QStringLiteral("sample_tokens")] = 4;
    s[QStringLiteral("sample_prompt")] = QStringLiteral("Who saw the ball?");
    QSignalSpy finished(m_controller->training(), &TrainingJobs::runFinished);
    QVERIFY(QMetaObject::invokeMethod(wizard, "startRequested", Q_ARG(QString, QStringLiteral("chat tune")),
                                      Q_ARG(QVariant, s)));
    const qint64 id = wizard->property("runId").toLongLong();
    QVERIFY(id != 0);
    QVERIFY(wizard->setProperty("step", 5));
    QVERIFY(finished.wait(240000));
    QCOMPARE(finished.first()[1].toString(), QStringLiteral("done"));
    QVERIFY(wizard->isVisible());
    QTRY_COMPARE(wizard->property("runStatus").toString(), QStringLiteral("done"));
    QTRY_VERIFY(findItem(wizard, QStringLiteral("wizardOpenTuned"))->isVisible());
    QCOMPARE(findItem(wizard, QStringLiteral("wizardRunProgress"))->property("value").toDouble(), 1.0);
    grab(QStringLiteral("train-wizard-run-done"));

    // The run bar keeps all its actions inside the window.
    QQuickItem* exportButton = findItem(page, QStringLiteral("exportButton"));
    QVERIFY(exportButton && exportButton->isVisible());
    QVERIFY(exportButton->mapToScene(QPointF(exportButton->width(), 0)).x() <= m_window->width());

    // The chat fine-tune's samples were made from the prompt as a chat turn, and show it as asked.
    const QList<SampleRow> samples = m_controller->training()->store()->samples(id);
    QVERIFY(!samples.isEmpty());
    QCOMPARE(samples.first().prompt, QStringLiteral("Who saw the ball?"));

    // The dashboard offers the tuned model; it opens under the run's name, not its folder's.
    QQuickItem* open = findItem(page, QStringLiteral("openTunedButton"));
    QVERIFY(open);
    QTRY_VERIFY(open->isVisible());
    QTest::mouseClick(m_window, Qt::LeftButton, Qt::NoModifier,
                      open->mapToScene(QPointF(open->width() / 2, open->height() / 2)).toPoint());
    QTRY_VERIFY_WITH_TIMEOUT(!m_controller->loading() && m_controller->hasModel(), 30000);
    QVERIFY2(m_controller->lastError().isEmpty(), qPrintable(m_controller->lastError()));
    QCOMPARE(m_controller->modelName(), QStringLiteral("chat tune"));

    // Closed and picked again from the run bar: the wizard reopens on the run's Evaluate step.
    QVERIFY(QMetaObject::invokeMethod(wizard, "cancelled"));
    QTRY_VERIFY(!wizard->isVisible());
    QVERIFY(QMetaObject::invokeMethod(page, "reviewRun", Q_ARG(QVariant, id)));
    QTRY_VERIFY(wizard->isVisible());
    QCOMPARE(wizard->property("step").toInt(), 6);
    QCOMPARE(wizard->property("runStatus").toString(), QStringLiteral("done"));
    QTRY_VERIFY(findItem(wizard, QStringLiteral("wizardEvaluate"))->property("enabled").toBool());
    grab(QStringLiteral("train-wizard-review"));

    // The Runs page: base model, method and final loss; a finished run can be deleted, folder and all.
    showPage(4);
    QQuickItem* runsPage = m_window->findChild<QQuickItem*>(QStringLiteral("page_runs"));
    QTRY_VERIFY(runsPage->isVisible());
    QObject* runs = runsPage->findChild<QObject*>(QStringLiteral("runsModel"));
    QTRY_COMPARE(runs->property("count").toInt(), 2);
    QVariantMap run;
    QVERIFY(QMetaObject::invokeMethod(runs, "get", Q_RETURN_ARG(QVariantMap, run), Q_ARG(qint64, id)));
    QCOMPARE(run.value(QStringLiteral("baseModelName")).toString(), QStringLiteral("model"));
    QCOMPARE(run.value(QStringLiteral("method")).toString(), QStringLiteral("Full"));
    QVERIFY(std::isfinite(run.value(QStringLiteral("finalLoss")).toDouble()));
    QCOMPARE(run.value(QStringLiteral("finalLoss")).toDouble(),
             m_controller->training()->store()->metrics(id).last().loss);
    QQuickItem* details = findItem(runsPage, QStringLiteral("runDetails"));
    QVERIFY(details);
    QVERIFY2(details->property("text").toString().startsWith(QStringLiteral("model · ")),
             qPrintable(details->property("text").toString()));
    QTest::qWait(200);
    grab(QStringLiteral("runs-details"));
    const QString folder = run.value(QStringLiteral("outputDir")).toString();
    QVERIFY(QDir(folder).exists());
    QString why;
    QVERIFY(QMetaObject::invokeMethod(runs, "deleteRun", Q_RETURN_ARG(QString, why), Q_ARG(qint64, id)));
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTRY_COMPARE(runs->property("count").toInt(), 1);
    QVERIFY(!QDir(folder).exists());
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }

  void alignmentRunShowsItsDashboard() {
    showPage(3);
    QQuickItem* page = m_window->findChild<QQuickItem*>(QStringLiteral("page_train"));
    QTRY_VERIFY(page->isVisible());
    QVERIFY(page->setProperty("showSetup", false));
    RunStore* store = m_controller->training()->store();

    // A PPO run as the store holds it after 60 steps: the reward climbs while the KL runs away past its bound.
    StoredRun r;
    r.name = QStringLiteral("ppo on arithmetic");
    r.recipe = QStringLiteral("ppo");
    r.modelPath = m_model;
    r.status = QStringLiteral("done");
    r.totalSteps = 60;
    const qint64 ppo = store->createRun(r);
    QVERIFY(ppo > 0);
    QList<MetricRow> rows;
    for (int step = 1; step <= 60; ++step) {
      MetricRow m;
      m.step = step, m.loss = 0.5 * std::exp(-step / 30.0) + 0.05 * std::sin(step), m.lr = 1e-5,
      m.gradNorm = 0.8 + 0.1 * std::cos(step), m.tokensPerS = 900, m.elapsedS = 2.0 * step;
      const double kl = 0.02 * std::pow(step, 1.7), score = 0.15 + 0.6 * (1 - std::exp(-step / 18.0));
      m.named = {{QStringLiteral("objective/kl"), kl},
                 {QStringLiteral("objective/scores"), score + 0.04 * std::sin(step * 1.3)},
                 {QStringLiteral("objective/rlhf_reward"), score - 0.05 * kl},
                 {QStringLiteral("objective/entropy"), 26.0 - 0.12 * step + 0.6 * std::sin(step)},
                 {QStringLiteral("objective/kl_coef"), 0.05},
                 {QStringLiteral("policy/entropy_avg"), 1.5 - 0.006 * step},
                 {QStringLiteral("policy/clipfrac_avg"), 0.12 + 0.03 * std::sin(step * 0.9)},
                 {QStringLiteral("loss/value_avg"), 0.7 * std::exp(-step / 25.0) + 0.08},
                 {QStringLiteral("val/ratio"), 1.0 + 0.03 * std::sin(step * 0.7)},
                 {QStringLiteral("completion_length"), 17.0 + 3.0 * std::sin(step / 6.0)}};
      if (step % 20 == 0) m.named.insert(QStringLiteral("val_accuracy"), 0.2 + step / 200.0);
      rows << m;
    }
    QVERIFY(store->appendMetrics(ppo, rows));
    QList<CompletionRow> completions;
    for (int step = 58; step <= 60; ++step)
      for (int k = 0; k < 2; ++k)
        completions << CompletionRow{step, k, QStringLiteral("What is %1 + %2?").arg(step).arg(k + 3),
                                     k == 0 ? QStringLiteral("%1").arg(step + 3) : QStringLiteral("The answer is 7"),
                                     k == 0 ? 1.0 : 0.0};
    QVERIFY(store->appendCompletions(ppo, completions));

    // (SQLite reuses the id of the run the test before deleted, which the page may still show.)
    QVERIFY(page->setProperty("shownRunId", 0));
    QVERIFY(page->setProperty("shownRunId", ppo));
    QQuickItem* dash = findItem(page, QStringLiteral("alignmentDashboard"));
    QVERIFY(dash);
    QTRY_VERIFY2(dash->isVisible(),
                 qPrintable(QStringLiteral("shown %1, model run %2, recipe %3, page visible %4")
                                .arg(page->property("shownRunId").toLongLong())
                                .arg(qvariant_cast<MetricsModel*>(dash->property("metrics"))->runId())
                                .arg(qvariant_cast<MetricsModel*>(dash->property("metrics"))->recipe())
                                .arg(page->isVisible())));
    auto* metrics = qvariant_cast<MetricsModel*>(dash->property("metrics"));
    QVERIFY(metrics);
    QCOMPARE(metrics->runId(), ppo);
    QCOMPARE(metrics->recipe(), QStringLiteral("ppo"));
    QCOMPARE(metrics->count(), 60);

    // A chart per key metric PPO reports, each filled from the stored series.
    for (const char* name : {"alignmentChart_reward", "alignmentChart_kl", "alignmentChart_entropy",
                             "alignmentChart_tokenEntropy", "alignmentChart_clip", "alignmentChart_valueLoss",
                             "alignmentChart_ratio", "alignmentChart_length", "alignmentChart_heldOut"}) {
      QQuickItem* card = findItem(dash, QString::fromLatin1(name));
      QVERIFY2(card && card->isVisible(), name);
      QObject* chart = qvariant_cast<QObject*>(card->property("chart"));
      QTRY_VERIFY(chart->property("count").toInt() >= 1);
      QAbstractSeries* series = nullptr;
      QVERIFY(QMetaObject::invokeMethod(chart, "series", Q_RETURN_ARG(QAbstractSeries*, series), Q_ARG(int, 0)));
      QTRY_COMPARE(qobject_cast<QXYSeries*>(series)->count(), QString::fromLatin1(name).endsWith("heldOut") ? 3 : 60);
    }
    QVERIFY(!findItem(dash, QStringLiteral("alignmentChart_accuracy")));  // a DPO / reward-model chart
    // The KL chart: its points are the stored series, its band the bound, shaded over the plot.
    QQuickItem* klCard = findItem(dash, QStringLiteral("alignmentChart_kl"));
    QObject* klChart = qvariant_cast<QObject*>(klCard->property("chart"));
    QAbstractSeries* klSeries = nullptr;
    QVERIFY(QMetaObject::invokeMethod(klChart, "series", Q_RETURN_ARG(QAbstractSeries*, klSeries), Q_ARG(int, 0)));
    QCOMPARE(qobject_cast<QXYSeries*>(klSeries)->at(59).y(),
             store->metricSeries(ppo, QStringLiteral("objective/kl")).last().value);
    QCOMPARE(klCard->property("band").toMap().value(QStringLiteral("high")).toDouble(), 15.0);
    QQuickItem* band = findItem(klCard, QStringLiteral("healthyBand"));
    QVERIFY(band);
    QTRY_VERIFY(band->isVisible() && band->height() > 10);
    QVERIFY(klCard->property("subtitle").toString().contains(QStringLiteral("healthy below 15")));
    // The ratio's band lies inside its chart: 0.8-1.25 around curves of 0.97-1.03 fills the plot.
    QQuickItem* ratioBand = findItem(findItem(dash, QStringLiteral("alignmentChart_ratio")), QStringLiteral("healthyBand"));
    QTRY_VERIFY(ratioBand->isVisible() && ratioBand->height() > 50);

    // The health check speaks: KL past its bound, and the reward rising meanwhile; nothing else.
    QStringList rules;
    for (const QVariant& w : metrics->healthWarnings()) rules << w.toMap().value(QStringLiteral("rule")).toString();
    QCOMPARE(rules, (QStringList{QStringLiteral("kl"), QStringLiteral("reward_hacking")}));
    QQuickItem* klWarning = findItem(dash, QStringLiteral("healthWarning_kl"));
    QVERIFY(klWarning && klWarning->isVisible());
    QVERIFY(findItem(klWarning, QStringLiteral("healthWarningText"))->property("text").toString().contains(
        QStringLiteral("objective/kl")));
    QVERIFY(findItem(dash, QStringLiteral("healthWarning_reward_hacking")));
    QVERIFY(!findItem(dash, QStringLiteral("healthAllClear"))->isVisible());

    // The completions, newest step first, with their rewards.
    QQuickItem* table = findItem(dash, QStringLiteral("completionsTable"));
    QVERIFY(table && table->isVisible());
    QStringList steps, texts, scores;
    for (QQuickItem* cell : table->childItems()) {
      if (cell->objectName() == QLatin1String("completionCell_step")) steps << cell->property("text").toString();
      if (cell->objectName() == QLatin1String("completionCell_completion")) texts << cell->property("text").toString();
      if (cell->objectName() == QLatin1String("completionCell_score")) scores << cell->property("text").toString();
    }
    QCOMPARE(steps, (QStringList{"60", "60", "59", "59", "58", "58"}));
    QCOMPARE(texts.first(), QStringLiteral("63"));
    QCOMPARE(scores.mid(0, 2), (QStringList{"1.00", "0.00"}));
    // The pretrain-only sample card steps aside.
    QVERIFY(!findItem(page, QStringLiteral("samplesCard"))->isVisible());

    // The whole dashboard in both themes (a tall window, so one picture holds it).
    m_window->resize(1280, 2300);
    QTest::qWait(200);
    grab(QStringLiteral("train-alignment-ppo"));
    m_controller->settings()->setTheme(QStringLiteral("dark"));
    QTest::qWait(200);
    grab(QStringLiteral("train-alignment-ppo-dark"));
    m_controller->settings()->setTheme(QStringLiteral("light"));

    // A DPO run: its own charts (pair accuracy with the held-out points, margin, implicit rewards), and a
    // healthy one says so.
    r.name = QStringLiteral("dpo on pairs");
    r.recipe = QStringLiteral("dpo");
    r.totalSteps = 40;
    const qint64 dpo = store->createRun(r);
    rows.clear();
    for (int step = 1; step <= 40; ++step) {
      MetricRow m;
      m.step = step, m.loss = 0.69 * std::exp(-step / 25.0), m.lr = 5e-6, m.gradNorm = 1, m.tokensPerS = 500,
      m.elapsedS = step;
      const double margin = 1.5 * (1 - std::exp(-step / 12.0));
      m.named = {{QStringLiteral("rewards/accuracies"), std::min(0.9, 0.5 + step / 50.0)},
                 {QStringLiteral("rewards/margins"), margin},
                 {QStringLiteral("rewards/chosen"), 0.3 * margin},
                 {QStringLiteral("rewards/rejected"), -0.7 * margin},
                 {QStringLiteral("logps/chosen"), -40.0},
                 {QStringLiteral("logps/rejected"), -45.0 - step / 4.0}};
      if (step % 10 == 0) {
        m.named.insert(QStringLiteral("val_rewards/accuracies"), std::min(0.85, 0.5 + step / 55.0));
        m.named.insert(QStringLiteral("val_rewards/margins"), 0.9 * margin);
      }
      rows << m;
    }
    QVERIFY(store->appendMetrics(dpo, rows));
    QVERIFY(page->setProperty("shownRunId", dpo));
    QTRY_COMPARE(metrics->recipe(), QStringLiteral("dpo"));
    QTRY_VERIFY(findItem(dash, QStringLiteral("alignmentChart_accuracy")));
    QVERIFY(findItem(dash, QStringLiteral("alignmentChart_margin")));
    QVERIFY(findItem(dash, QStringLiteral("alignmentChart_implicitRewards")));
    QVERIFY(!findItem(dash, QStringLiteral("alignmentChart_kl")));
    QQuickItem* accuracy = findItem(dash, QStringLiteral("alignmentChart_accuracy"));
    QObject* accuracyChart = qvariant_cast<QObject*>(accuracy->property("chart"));
    QTRY_COMPARE(accuracyChart->property("count").toInt(), 2);  // train and held out
    QVERIFY(metrics->healthWarnings().isEmpty());
    QTRY_VERIFY(findItem(dash, QStringLiteral("healthAllClear"))->isVisible());
    QVERIFY(!findItem(dash, QStringLiteral("completionsCard"))->isVisible());  // DPO samples nothing
    // The common charts below follow the switch too.
    QObject* lossChart = qvariant_cast<QObject*>(findItem(page, QStringLiteral("lossChart"))->property("chart"));
    QAbstractSeries* lossSeries = nullptr;
    QVERIFY(QMetaObject::invokeMethod(lossChart, "series", Q_RETURN_ARG(QAbstractSeries*, lossSeries), Q_ARG(int, 0)));
    QTRY_COMPARE(qobject_cast<QXYSeries*>(lossSeries)->count(), 40);
    grab(QStringLiteral("train-alignment-dpo"));
    m_controller->settings()->setTheme(QStringLiteral("dark"));
    QTest::qWait(200);
    grab(QStringLiteral("train-alignment-dpo-dark"));
    m_controller->settings()->setTheme(QStringLiteral("light"));
    m_window->resize(1280, 900);

    // A pretrain run looks as it always did.
    r.name = QStringLiteral("plain");
    r.recipe = QStringLiteral("pretrain");
    const qint64 plain = store->createRun(r);
    MetricRow m;
    m.step = 1, m.loss = 5;
    QVERIFY(store->appendMetrics(plain, {m}));
    QVERIFY(page->setProperty("shownRunId", plain));
    QTRY_VERIFY(!dash->isVisible());
    QVERIFY(!metrics->property("alignment").toBool());
    QVERIFY(findItem(page, QStringLiteral("samplesCard"))->isVisible());
    QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(QLatin1Char('\n'))));
  }
};

QTEST_MAIN(TestTrainPage)
#include "test_train_page.moc"
