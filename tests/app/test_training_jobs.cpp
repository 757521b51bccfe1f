// TrainingJobs: real training runs of a tiny GPT-2 (2 layers, 64 wide, the GPT-2 tokenizer) on its
// worker thread. Every step's metrics land in SQLite, equal to what engine::Trainer reports when run
// directly; cancel and pause act after exactly the step they were requested in; a paused run and a
// run interrupted by the app going away continue the same loss curve as an uninterrupted run.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QScopeGuard>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "engine/model_loader.h"
#include "engine/train/checkpoint.h"
#include "services/processmemory.h"
#include "services/store/database.h"
#include "services/store/runstore.h"
#include "services/trainingjobs.h"
#include "services/trainingsetup.h"
#include "support/training_job_fixture.h"

namespace {
constexpr int kTimeoutMs = 240000;
}

class TestTrainingJobs : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString m_model, m_data;
  QList<double> m_reference;  // losses of an uninterrupted 6-step run, straight from engine::Trainer
  QList<double> m_referenceVal;
  int m_dbCount = 0;

  QVariantMap settings(int steps) const {
    return {{"recipe", "pretrain"},
            {"model", m_model},
            {"data", m_data},
            {"steps", steps},
            {"batch", 2},
            {"seq", 32},
            {"lr", 3e-3},
            {"schedule", "cosine"},
            {"warmup", 1},
            {"shuffle", true},
            {"seed", 5},
            {"val_every", 3},
            {"val_fraction", 0.1},
            {"val_batches", 2},
            {"threads", 1},
            {"sample_every", 3},
            {"sample_prompt", "Tom saw"},
            {"sample_tokens", 4},
            {"save_every", 2}};
  }
  QString newDb() { return m_dir.filePath(QStringLiteral("store%1.db").arg(++m_dbCount)); }

  static QString waitFinished(QSignalSpy& spy, qint64 id) {
    for (int i = 0; i < spy.size(); ++i)
      if (spy[i][0].toLongLong() == id) return spy[i][1].toString();
    if (!spy.wait(kTimeoutMs)) return QStringLiteral("timeout");
    return waitFinished(spy, id);
  }

  void compareToReference(const QList<MetricRow>& rows) {
    QCOMPARE(rows.size(), m_reference.size());
    for (int i = 0; i < rows.size(); ++i) {
      QCOMPARE(rows[i].step, qint64(i + 1));
      // Resume is exact (engine::Trainer's invariant), so the curve is the same to the bit.
      QCOMPARE(rows[i].loss, m_reference[i]);
      if (std::isnan(m_referenceVal[i])) QVERIFY(std::isnan(rows[i].valLoss));
      else QCOMPARE(rows[i].valLoss, m_referenceVal[i]);
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath(QStringLiteral("model"));
    writeTinyGpt2WithTokenizer(m_model);
    m_data = m_dir.filePath(QStringLiteral("stories.txt"));
    QVERIFY(writeStories(m_data, 120));

    // The reference: the same settings through engine::Trainer directly, no queue, no thread.
    std::unique_ptr<engine::TrainingRun> s =
        buildTrainingSession(settings(6), m_dir.filePath(QStringLiteral("reference")));
    s->trainer->run([&](const engine::StepMetrics& m) {
      m_reference << double(m.loss);
      m_referenceVal << (m.val_loss ? double(*m.val_loss) : qQNaN());
      return true;
    });
    QCOMPARE(m_reference.size(), 6);
    QVERIFY(!std::isnan(m_referenceVal[2]) && !std::isnan(m_referenceVal[5]));
  }

  void shortRunWritesOneRowPerStep() {
    Database db;
    QCOMPARE(db.open(newDb()), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    QSignalSpy finished(&jobs, &TrainingJobs::runFinished);
    QSignalSpy arrived(&jobs, &TrainingJobs::metricsArrived);
    QSignalSpy samples(&jobs, &TrainingJobs::sampleArrived);
    QSignalSpy memory(&jobs, &TrainingJobs::residentMemoryChanged);
    QCOMPARE(jobs.residentMemory(), qint64(-1));  // nothing measured before a step arrives
    const QString out = m_dir.filePath(QStringLiteral("short"));
    const qint64 id = jobs.enqueue(QStringLiteral("short"), settings(6), out);
    QVERIFY(id > 0);
    QVERIFY(jobs.busy());
    QCOMPARE(waitFinished(finished, id), QStringLiteral("done"));
    QVERIFY(!jobs.busy());
    QCOMPARE(arrived.size(), 6);
    // The dashboard's Memory figure was read as steps arrived: at least the process's code and Qt.
    QVERIFY(memory.size() >= 1);
    QVERIFY(jobs.residentMemory() > 4 * 1024 * 1024);
    const StoredRun run = store.run(id);
    QCOMPARE(run.status, QStringLiteral("done"));
    QVERIFY(run.startedMs > 0 && run.finishedMs >= run.startedMs);
    const QList<MetricRow> rows = store.metrics(id);
    compareToReference(rows);
    for (int i = 0; i < rows.size(); ++i) {
      QVERIFY(rows[i].gradNorm > 0 && rows[i].tokensPerS > 0);
      QVERIFY(i == 0 || rows[i].lr > 0);  // warmup starts at 0
      if (i) QVERIFY(rows[i].elapsedS >= rows[i - 1].elapsedS);
    }
    const QList<SampleRow> stored = store.samples(id);
    QCOMPARE(stored.size(), 2);
    QCOMPARE(samples.size(), 2);
    QCOMPARE(stored[0].step, 3);
    QCOMPARE(stored[0].prompt, QStringLiteral("Tom saw"));
    QVERIFY(!stored[1].text.isEmpty());
    // The trained model is written as a loadable HF directory.
    QVERIFY(engine::load_model(out.toStdString()) != nullptr);
  }

  void residentMemoryFollowsAllocations() {
    const qint64 before = residentMemoryBytes();
    QVERIFY(before > 0);
    // 64 MiB touched page by page must show up as resident (and untouched pages must not count).
    constexpr size_t kBytes = size_t(64) << 20;
    std::unique_ptr<char[]> block(new char[kBytes]);
    static char* volatile escaped;  // the reader cannot see the block unless the stores must happen first
    escaped = block.get();
    for (size_t i = 0; i < kBytes; i += 4096) escaped[i] = char(i / 4096);
    const qint64 after = residentMemoryBytes();
    QVERIFY2(after - before >= qint64(kBytes) * 9 / 10, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(after)));
    QVERIFY(block[4096] == char(1));
  }

  void loraRunSavesTheAdapterAndTheMergedModel() {
    Database db;
    QCOMPARE(db.open(newDb()), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    QSignalSpy finished(&jobs, &TrainingJobs::runFinished);
    const QString out = m_dir.filePath(QStringLiteral("lora"));
    QVariantMap s = settings(4);
    s["lora_rank"] = 4;
    s["lora_alpha"] = 8.0;
    s["lr"] = 1e-2;
    const qint64 id = jobs.enqueue(QStringLiteral("lora"), s, out);
    QCOMPARE(waitFinished(finished, id), QStringLiteral("done"));
    QVERIFY(QFileInfo::exists(out + "/adapter/adapter_config.json"));
    QVERIFY(QFileInfo::exists(out + "/adapter/adapter_model.safetensors"));
    // The merged model differs from the base in an adapted group (B starts at zero, so any difference
    // comes from the trained adapters) and equals it where no adapter was placed (the embeddings).
    const auto base = engine::load_model(m_model.toStdString());
    const auto merged = engine::load_model(out.toStdString());
    const engine::ParamTensor& q = base->param("h.qkv.weight");
    const float* qb = base->param_data("h.qkv.weight");
    const float* qm = merged->param_data("h.qkv.weight");
    double diff = 0;
    for (uint64_t i = 0; i < q.numel; ++i) diff = std::max(diff, double(std::fabs(qb[i] - qm[i])));
    QVERIFY2(diff > 1e-6, qPrintable(QString::number(diff)));
    const engine::ParamTensor& e = base->param("wte");
    QVERIFY(std::equal(base->param_data("wte"), base->param_data("wte") + e.numel, merged->param_data("wte")));
  }

  void cancelStopsAfterTheCurrentStep() {
    Database db;
    QCOMPARE(db.open(newDb()), Database::OpenState::Ok);
    RunStore store(db);
    QSemaphore reached, go;
    TrainingJobs jobs(&store);
    // Whatever fails below, the training thread is never left blocked in the hook.
    const auto unblock = qScopeGuard([&] { go.release(100); });
    jobs.setStepHook([&](qint64, qint64 step) {
      if (step == 2) {
        reached.release();
        go.acquire();
      }
    });
    QSignalSpy finished(&jobs, &TrainingJobs::runFinished);
    const qint64 id =
        jobs.enqueue(QStringLiteral("cancel me"), settings(1000), m_dir.filePath(QStringLiteral("cancel")));
    // A second job waits in the queue and starts when the first is cancelled.
    const qint64 next = jobs.enqueue(QStringLiteral("next"), settings(1), m_dir.filePath(QStringLiteral("next")));
    QCOMPARE(store.run(next).status, QStringLiteral("queued"));
    // A queued run is cancelled at once and never starts.
    const qint64 never = jobs.enqueue(QStringLiteral("never"), settings(1), m_dir.filePath(QStringLiteral("never")));
    QVERIFY(jobs.cancel(never));
    QCOMPARE(store.run(never).status, QStringLiteral("cancelled"));
    QVERIFY(reached.tryAcquire(1, kTimeoutMs));
    QVERIFY(jobs.cancel(id));
    go.release();
    QCOMPARE(waitFinished(finished, id), QStringLiteral("cancelled"));
    QCOMPARE(store.run(id).status, QStringLiteral("cancelled"));
    QCOMPARE(store.metrics(id).size(), 2);
    QCOMPARE(waitFinished(finished, next), QStringLiteral("done"));
    QCOMPARE(store.metrics(next).size(), 1);
    QVERIFY(store.metrics(never).isEmpty());
    // A finished run cannot be cancelled.
    QVERIFY(!jobs.cancel(id));
  }

  void pauseResumeContinuesTheSameCurve() {
    Database db;
    QCOMPARE(db.open(newDb()), Database::OpenState::Ok);
    RunStore store(db);
    QSemaphore reached, go;
    TrainingJobs jobs(&store);
    // Whatever fails below, the training thread is never left blocked in the hook.
    const auto unblock = qScopeGuard([&] { go.release(100); });
    jobs.setStepHook([&](qint64, qint64 step) {
      if (step == 3) {
        reached.release();
        go.acquire();
      }
    });
    QSignalSpy finished(&jobs, &TrainingJobs::runFinished);
    QSignalSpy started(&jobs, &TrainingJobs::runStarted);
    const qint64 id = jobs.enqueue(QStringLiteral("pause me"), settings(6), m_dir.filePath(QStringLiteral("pause")));
    QVERIFY(reached.tryAcquire(1, kTimeoutMs));
    QVERIFY(jobs.pause(id));
    go.release();
    QCOMPARE(waitFinished(finished, id), QStringLiteral("paused"));
    QCOMPARE(store.run(id).status, QStringLiteral("paused"));
    QCOMPARE(store.metrics(id).size(), 3);
    jobs.setStepHook({});
    finished.clear();
    QVERIFY(jobs.resume(id));
    QVERIFY(!jobs.resume(id));  // already queued/running
    QCOMPARE(waitFinished(finished, id), QStringLiteral("done"));
    QCOMPARE(started.size(), 2);
    QCOMPARE(started[1][1].toLongLong(), 3);  // from the pause's checkpoint
    compareToReference(store.metrics(id));
    // Elapsed time continues across the pause.
    const QList<MetricRow> rows = store.metrics(id);
    QVERIFY(rows[3].elapsedS >= rows[2].elapsedS);
  }

  void killedRunIsResumableAfterRestart() {
    const QString path = newDb(), out = m_dir.filePath(QStringLiteral("killed"));
    qint64 id = 0;
    {
      Database db;
      QCOMPARE(db.open(path), Database::OpenState::Ok);
      RunStore store(db);
      QSemaphore reached, go;
      auto jobs = std::make_unique<TrainingJobs>(&store);
      const auto unblock = qScopeGuard([&] { go.release(100); });
      jobs->setStepHook([&](qint64, qint64 step) {
        if (step == 3) {
          reached.release();
          go.acquire();
        }
      });
      id = jobs->enqueue(QStringLiteral("killed"), settings(6), out);
      // The event loop runs meanwhile (as in the app), so rows 1-2 reach the store.
      bool got = false;  // QTRY_VERIFY evaluates its expression once more at the end
      QTRY_VERIFY_WITH_TIMEOUT(got || (got = reached.tryAcquire()), kTimeoutMs);
      QTRY_VERIFY_WITH_TIMEOUT(store.metrics(id).size() >= 2, kTimeoutMs);  // slow on a loaded CI machine
      // The app quits mid-step (the destructor joins the thread, so step 3 is let go from elsewhere).
      std::thread release([&] {
        QThread::msleep(100);
        go.release();
      });
      jobs.reset();
      release.join();
      QCOMPARE(store.run(id).status, QStringLiteral("running"));
    }
    // A kill leaves no checkpoint at the stop: only the periodic one of step 2 (save_every 2).
    const std::string ckpts = QDir(out).filePath(QStringLiteral("checkpoints")).toStdString();
    for (const std::string& p : engine::list_checkpoints(ckpts))
      if (p.find("00000002") == std::string::npos) QVERIFY(QFile::remove(QString::fromStdString(p)));
    QCOMPARE(engine::list_checkpoints(ckpts).size(), size_t(1));

    Database db;
    QCOMPARE(db.open(path), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    QSignalSpy finished(&jobs, &TrainingJobs::runFinished);
    QSignalSpy started(&jobs, &TrainingJobs::runStarted);
    QCOMPARE(jobs.recoverInterrupted(), QList<qint64>{id});
    QCOMPARE(store.run(id).status, QStringLiteral("paused"));
    QVERIFY(!jobs.busy());
    QVERIFY(jobs.resume(id));
    QCOMPARE(waitFinished(finished, id), QStringLiteral("done"));
    QCOMPARE(started.first()[1].toLongLong(), 2);
    compareToReference(store.metrics(id));
  }

  void badSettingsFailWithAReason() {
    Database db;
    QCOMPARE(db.open(newDb()), Database::OpenState::Ok);
    RunStore store(db);
    TrainingJobs jobs(&store);
    QSignalSpy finished(&jobs, &TrainingJobs::runFinished);
    QVariantMap s = settings(3);
    s[QStringLiteral("data")] = m_dir.filePath(QStringLiteral("missing.txt"));
    const qint64 a = jobs.enqueue(QStringLiteral("no data"), s, m_dir.filePath(QStringLiteral("bad1")));
    s = settings(3);
    s[QStringLiteral("lr")] = QStringLiteral("fast");
    const qint64 b = jobs.enqueue(QStringLiteral("bad lr"), s, m_dir.filePath(QStringLiteral("bad2")));
    // An alignment recipe on data of another kind: the plain text is no preference pair.
    s = settings(3);
    s[QStringLiteral("recipe")] = QStringLiteral("dpo");
    const qint64 c = jobs.enqueue(QStringLiteral("dpo"), s, m_dir.filePath(QStringLiteral("bad3")));
    QCOMPARE(waitFinished(finished, a), QStringLiteral("failed"));
    QCOMPARE(waitFinished(finished, b), QStringLiteral("failed"));
    QCOMPARE(waitFinished(finished, c), QStringLiteral("failed"));
    QVERIFY2(store.run(a).error.contains(QStringLiteral("missing.txt")), qPrintable(store.run(a).error));
    QVERIFY2(store.run(b).error.contains(QStringLiteral("'lr'")), qPrintable(store.run(b).error));
    QVERIFY2(store.run(c).error.contains(QStringLiteral("line 1")), qPrintable(store.run(c).error));
  }

  void memoryEstimate() {
    // GPT-2 124M: P = 124,439,808; L 12, C 768, NH 12, V 50257; batch 4 x 128.
    const QVariantMap shape{{"parameters", 124439808.0},
                            {"layers", 12},
                            {"width", 768},
                            {"heads", 12},
                            {"vocab", 50257}};
    const QVariantMap full = estimateTrainingMemory(shape, {{"batch", 4}, {"seq", 128}, {"lora_rank", 0}});
    // By hand: weights 4P = 497,759,232; gradients 4P; AdamW 8P = 995,518,464;
    // activations 4*4*128*(12*(16*768 + 2*12*128) + 2*50257) = 2048*(12*15360 + 100514) = 583,340,032.
    QCOMPARE(full.value("weights").toDouble(), 497759232.0);
    QCOMPARE(full.value("gradients").toDouble(), 497759232.0);
    QCOMPARE(full.value("optimizer").toDouble(), 995518464.0);
    QCOMPARE(full.value("activations").toDouble(), 583340032.0);
    QCOMPARE(full.value("total").toDouble(), 497759232.0 * 2 + 995518464.0 + 583340032.0);
    // LoRA rank 8: 12 layers * 8 * (4*768 + 2*768) = 442,368 trainable values.
    const QVariantMap lora = estimateTrainingMemory(shape, {{"batch", 4}, {"seq", 128}, {"lora_rank", 8}});
    QCOMPARE(lora.value("trainable").toDouble(), 442368.0);
    QCOMPARE(lora.value("optimizer").toDouble(), 8 * 442368.0);
    QVERIFY(lora.value("total").toDouble() < full.value("total").toDouble() / 2);
  }

  void cliCommandMatchesSettings() {
    QVariantMap s = settings(6);
    s[QStringLiteral("sample_prompt")] = QStringLiteral("it's");
    const QString cmd = trainCliCommand(s, QStringLiteral("/tmp/out dir"));
    QVERIFY2(cmd.startsWith(QStringLiteral("llm-workbench-cli train --recipe pretrain --model ")), qPrintable(cmd));
    QVERIFY2(cmd.contains(QStringLiteral(" --out '/tmp/out dir'")), qPrintable(cmd));
    QVERIFY2(cmd.contains(QStringLiteral(" --steps 6")), qPrintable(cmd));
    QVERIFY2(cmd.contains(QStringLiteral(" --lr 0.003")), qPrintable(cmd));
    QVERIFY2(cmd.contains(QStringLiteral(" --sample-prompt 'it'\\''s'")), qPrintable(cmd));
    QVERIFY2(!cmd.contains(QStringLiteral("--shuffle")), qPrintable(cmd));  // the default
    QVERIFY2(!cmd.contains(QStringLiteral("--beta1")), qPrintable(cmd));
  }
};

QTEST_GUILESS_MAIN(TestTrainingJobs)
#include "test_training_jobs.moc"
