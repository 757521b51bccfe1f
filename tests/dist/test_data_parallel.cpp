// Data-parallel training over MPI, as a user launches it: `mpirun -np 2 llm-workbench-cli train ...` against one
// process with the same global --batch. Two ranks each training on half of every batch must give the loss curve
// of one rank on the whole batch (to float rounding: the ranks' gradient sums are added in another order) for
// pretraining, SFT -- whose masks give the ranks different token counts, so a plain mean of the ranks' losses
// would not match -- and LoRA; rank 0 alone prints and writes; a checkpoint written at world size 2 resumes at
// world size 1 and 2 with the same data order; the alignment recipes are refused by name.
//
// Registered only when CMake found MPI (elsewhere ctest reports it as skipped, tests/CMakeLists.txt). Tiny model
// (2 layers, 64 wide, a 300-token BPE learnt from the data), one thread per rank.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>

namespace {

struct Run {
  int code;
  QByteArray out, err;
};

QProcessEnvironment mpiEnvironment() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  // CI runs as root; Open MPI refuses that unless told twice.
  env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
  env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  // Containers often forbid the cross-process memory attach of the shared-memory transport's single-copy mode.
  env.insert("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
  return env;
}

Run exec(const QString& program, const QStringList& args) {
  QProcess p;
  p.setProcessEnvironment(mpiEnvironment());
  p.start(program, args);
  if (!p.waitForFinished(300000)) {
    p.kill();
    p.waitForFinished();
    return {-1, {}, "timeout"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput(),
          p.readAllStandardError()};
}

Run cli(const QStringList& args) { return exec(QStringLiteral(WB_CLI_PATH), args); }

Run mpirun(int ranks, const QStringList& args) {
  return exec(QStringLiteral(WB_MPIEXEC), QStringList{"-np", QString::number(ranks), "--oversubscribe", "--bind-to",
                                                      "none", QStringLiteral(WB_CLI_PATH)} +
                                              args);
}

QList<QJsonObject> jsonLines(const QByteArray& out) {
  QList<QJsonObject> lines;
  for (const QByteArray& l : out.split('\n'))
    if (!l.trimmed().isEmpty()) lines << QJsonDocument::fromJson(l).object();
  return lines;
}

// |a - b| <= tol * max(1, |b|): the losses here are O(1-6), so this is a relative bound of about tol.
bool near(double a, double b, double tol) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

}  // namespace

class TestDataParallel : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model, m_text, m_chat;

  // The same curve, step by step: loss and grad_norm (and val_loss where either has it) within `tol`.
  static void compareCurves(const QList<QJsonObject>& got, const QList<QJsonObject>& want, double tol) {
    QCOMPARE(got.size(), want.size());
    double worst = 0;
    for (int i = 0; i < got.size(); ++i) {
      QCOMPARE(got[i]["step"].toInt(), want[i]["step"].toInt());
      for (const char* key : {"loss", "grad_norm", "val_loss"}) {
        QCOMPARE(got[i].contains(key), want[i].contains(key));
        if (!want[i].contains(key)) continue;
        const double a = got[i][key].toDouble(), b = want[i][key].toDouble();
        worst = std::max(worst, std::fabs(a - b) / std::max(1.0, std::fabs(b)));
        QVERIFY2(near(a, b, tol), qPrintable(QString("step %1 %2: %3 (2 ranks) vs %4 (1 rank)")
                                                 .arg(want[i]["step"].toInt())
                                                 .arg(key)
                                                 .arg(a, 0, 'g', 9)
                                                 .arg(b, 0, 'g', 9)));
      }
    }
    qInfo("largest relative difference over the curve: %.2e", worst);
  }

  // 1 rank and 2 ranks with the same arguments: the 2-rank run's lines carry world_size and the traffic, rank 0
  // alone printed them, and the curves agree.
  void oneVersusTwo(const QStringList& args, const QString& name) {
    const Run one = cli(QStringList(args) << "--out" << m_dir.path() + "/" + name + "-1");
    QVERIFY2(one.code == 0, one.err.constData());
    const Run two = mpirun(2, QStringList(args) << "--out" << m_dir.path() + "/" + name + "-2");
    QVERIFY2(two.code == 0, two.err.constData());
    const QList<QJsonObject> a = jsonLines(one.out), b = jsonLines(two.out);
    QCOMPARE(a.size(), 10);
    for (const QJsonObject& o : b) {
      QCOMPARE(o["world_size"].toInt(), 2);
      QVERIFY(o["allreduce_bytes"].toDouble() > 0);
      QVERIFY(o["comm_ms"].isDouble() && o["wait_ms"].isDouble());
    }
    QVERIFY(!a[0].contains("world_size"));
    QVERIFY2(two.err.contains("data-parallel over 2 processes (mpi)"), two.err.constData());
    QCOMPARE(two.err.count("data-parallel over"), 1);  // rank 0 alone speaks
    compareCurves(b, a, 2e-5);
    QVERIFY(QFileInfo::exists(m_dir.path() + "/" + name + "-2/model.safetensors"));
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    const QString d = m_dir.path();
    m_text = d + "/stories.txt";
    QFile t(m_text);
    QVERIFY(t.open(QIODevice::WriteOnly));
    const char* names[] = {"Tom", "Ana", "Lily", "Max", "Sam"};
    const char* things[] = {"ball", "cat", "tree", "boat", "kite", "dog"};
    for (int i = 0; i < 300; ++i)
      t.write(QString("%1 saw a %2. The %2 was big. ").arg(names[i % 5], things[(i / 5) % 6]).toUtf8() +
              (i % 7 == 6 ? "\n" : ""));
    t.close();
    // Replies of very different lengths: the two halves of a batch count different numbers of assistant tokens.
    m_chat = d + "/chat.jsonl";
    QFile c(m_chat);
    QVERIFY(c.open(QIODevice::WriteOnly));
    for (int i = 0; i < 64; ++i) {
      QString reply = QString("%1").arg(2 * i);
      for (int w = 0; w < (i * 7) % 11; ++w) reply += QString(" and %1 more").arg(w);
      c.write(QString(R"({"messages":[{"role":"user","content":"What is %1 plus %1?"},)"
                      R"({"role":"assistant","content":"%2"}]})")
                  .arg(i)
                  .arg(reply)
                  .toUtf8() +
              "\n");
    }
    c.close();
    Run r = cli({"tokenizer", "train", "--data", m_text, "--data", m_chat, "--vocab-size", "300", "--out", d + "/tok"});
    QVERIFY2(r.code == 0, r.err.constData());
    m_model = d + "/tiny";
    r = cli({"init", "--preset", "tiny", "--vocab", "300", "--context", "64", "--tokenizer", d + "/tok", "--out",
             m_model});
    QVERIFY2(r.code == 0, r.err.constData());
  }

  void pretrain_two_ranks_match_one() {
    oneVersusTwo({"train", "--recipe", "pretrain", "--model", m_model, "--data", m_text, "--steps", "10", "--batch",
                  "4", "--seq", "32", "--lr", "3e-3", "--warmup", "2", "--val-every", "5", "--val-fraction", "0.1",
                  "--val-batches", "2", "--threads", "1", "--seed", "3"},
                 "pretrain");
  }

  // With gradient accumulation too: each micro-batch is split between the ranks.
  void sft_two_ranks_match_one() {
    oneVersusTwo({"train", "--recipe", "sft", "--model", m_model, "--data", m_chat, "--steps", "10", "--batch", "4",
                  "--grad-accum", "2", "--seq", "48", "--lr", "3e-3", "--chat-template", "chatml", "--val-every", "0",
                  "--threads", "1", "--seed", "4"},
                 "sft");
  }

  void lora_two_ranks_match_one() {
    oneVersusTwo({"train", "--recipe", "pretrain", "--model", m_model, "--data", m_text, "--steps", "10", "--batch",
                  "4", "--seq", "32", "--lr", "1e-2", "--lora-rank", "4", "--val-every", "0", "--threads", "1",
                  "--seed", "5"},
                 "lora");
    QVERIFY(QFileInfo::exists(m_dir.path() + "/lora-2/adapter/adapter_model.safetensors"));
  }

  // Four steps at world size 2; then the run cut after step 2 and resumed at world size 1 and at 2: steps 3 and 4
  // repeat the uninterrupted run's (the data position is the global batch's, the same at every world size).
  void checkpoint_at_two_resumes_at_one_and_two() {
    const QStringList args = {"train",     "--recipe", "sft",   "--model", m_model, "--data",          m_chat,
                              "--steps",   "4",        "--batch", "4",     "--seq", "48",              "--lr",
                              "3e-3",      "--val-every", "0",  "--save-every", "2", "--keep", "0", "--threads",
                              "1",         "--seed",   "6",     "--chat-template", "chatml"};
    const QString straight = m_dir.path() + "/resume-straight";
    const Run full = mpirun(2, QStringList(args) << "--out" << straight);
    QVERIFY2(full.code == 0, full.err.constData());
    const QList<QJsonObject> want = jsonLines(full.out);
    QCOMPARE(want.size(), 4);
    QVERIFY(want[1]["checkpoint"].toString().endsWith("ckpt_00000002.safetensors"));
    for (int world : {1, 2}) {
      const QString cut = m_dir.path() + "/resume-at-" + QString::number(world);
      QVERIFY(QDir().mkpath(cut + "/checkpoints"));
      QVERIFY(QFile::copy(straight + "/checkpoints/ckpt_00000002.safetensors",
                          cut + "/checkpoints/ckpt_00000002.safetensors"));
      const QStringList resume = QStringList(args) << "--out" << cut << "--resume";
      const Run r = world == 1 ? cli(resume) : mpirun(2, resume);
      QVERIFY2(r.code == 0, r.err.constData());
      QVERIFY2(r.err.contains("resuming at step 2 of 4"), r.err.constData());
      compareCurves(jsonLines(r.out), want.mid(2), 2e-5);
    }
  }

  void alignment_recipes_and_small_batches_are_refused() {
    const QString prefs = m_dir.path() + "/prefs.jsonl";
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "20", "--seed", "1", "--out", prefs}).code, 0);
    Run r = mpirun(2, {"train", "--recipe", "dpo", "--model", m_model, "--data", prefs, "--out",
                       m_dir.path() + "/dpo-2", "--steps", "2", "--threads", "1"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("covers the pretrain and sft recipes"), r.err.constData());
    QCOMPARE(r.err.count("covers the pretrain and sft recipes"), 1);
    QVERIFY(!QFileInfo::exists(m_dir.path() + "/dpo-2/model.safetensors"));
    r = mpirun(2, {"train", "--recipe", "pretrain", "--model", m_model, "--data", m_text, "--out",
                   m_dir.path() + "/batch-1", "--steps", "2", "--batch", "1", "--seq", "32", "--threads", "1"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("cannot be shared by 2 processes"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestDataParallel)
#include "test_data_parallel.moc"
