// Data-parallel training over MPI, as a user launches it: `mpirun -np 2 llm-workbench-cli train ...` against one
// process with the same global --batch. Two ranks each training on half of every batch must give the loss curve
// of one rank on the whole batch (to float rounding: the ranks' gradient sums are added in another order) for
// pretraining, SFT -- whose masks give the ranks different token counts, so a plain mean of the ranks' losses
// would not match -- and LoRA; rank 0 alone prints and writes; a checkpoint written at world size 2 resumes at
// world size 1 and 2 with the same data order; the alignment recipes are refused by name.
// ZeRO stage 1 (--zero 1): at 2 and 3 processes (3: shards of unequal length, and the first run of more than two
// ranks) the curve of plain data parallelism and of one process, each rank reporting its share of the AdamW state;
// at 2 processes bit for bit plain data parallelism's weights (a sum of two floats is the same in either order); a
// ZeRO checkpoint resumes at world size 1 without ZeRO and at 2 and 3 with it; --zero is refused for the alignment
// recipes.
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

QByteArray fileBytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

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

  // Plain data parallelism and ZeRO at 2 and 3 processes against one process; ZeRO at 2 is plain at 2 bit for bit.
  void zero_matches_plain_data_parallel_and_one_process() {
    const QStringList args = {"train",   "--recipe", "pretrain", "--model", m_model, "--data",  m_text, "--steps",
                              "8",       "--batch",  "6",        "--seq",   "32",    "--lr",    "3e-3", "--warmup",
                              "2",       "--val-every", "4",     "--val-fraction", "0.1", "--val-batches", "2",
                              "--threads", "1",      "--seed",   "7",       "--grad-clip", "0.5"};
    const QString d = m_dir.path() + "/zero-";
    const Run one = cli(QStringList(args) << "--out" << d + "1");
    QVERIFY2(one.code == 0, one.err.constData());
    const QList<QJsonObject> want = jsonLines(one.out);
    QCOMPARE(want.size(), 8);
    QVERIFY(!want[0].contains("optimizer_bytes"));
    // At one process --zero 1 shards nothing: the unsharded run exactly, reporting the whole state.
    const Run oneZero = cli(QStringList(args) << "--zero" << "1" << "--out" << d + "1z");
    QVERIFY2(oneZero.code == 0, oneZero.err.constData());
    const QList<QJsonObject> z1 = jsonLines(oneZero.out);
    compareCurves(z1, want, 0.0);
    const double state = z1[0]["optimizer_bytes"].toDouble();
    QVERIFY(state > 0);
    QCOMPARE(z1[0]["zero"].toInt(), 1);
    for (int world : {2, 3}) {
      const QString w = QString::number(world);
      const Run plain = mpirun(world, QStringList(args) << "--out" << d + w);
      QVERIFY2(plain.code == 0, plain.err.constData());
      const Run zero = mpirun(world, QStringList(args) << "--zero" << "1" << "--out" << d + w + "z");
      QVERIFY2(zero.code == 0, zero.err.constData());
      QVERIFY2(zero.err.contains("ZeRO stage 1 over " + w.toUtf8() + " processes"), zero.err.constData());
      const QList<QJsonObject> p = jsonLines(plain.out), z = jsonLines(zero.out);
      for (int i = 0; i < z.size(); ++i) {
        QCOMPARE(z[i]["world_size"].toInt(), world);
        QCOMPARE(z[i]["zero"].toInt(), 1);
        QCOMPARE(p[i]["optimizer_bytes"].toDouble(), state);  // plain: every rank holds it all
        // Rank 0's share: within one alignment unit (16 values, m and v) of an even share.
        QVERIFY2(std::fabs(z[i]["optimizer_bytes"].toDouble() - state / world) <= 16 * 8,
                 qPrintable(QString::number(z[i]["optimizer_bytes"].toDouble())));
        QCOMPARE(z[i]["allreduce_bytes"].toDouble(), p[i]["allreduce_bytes"].toDouble());
      }
      compareCurves(p, want, 2e-5);
      compareCurves(z, want, 2e-5);
      // Two ranks add two floats, the same sum in either order: ZeRO's weights are plain data parallelism's. Three
      // add in an order that depends on MPI's algorithm for each collective, so only float rounding is shared.
      compareCurves(z, p, world == 2 ? 0.0 : 2e-5);
      if (world == 2) {
        const QByteArray a = fileBytes(d + w + "z/model.safetensors");
        QVERIFY(a.size() > 1000);
        QVERIFY(a == fileBytes(d + w + "/model.safetensors"));
      }
    }
  }

  // LoRA's adapters are sharded too (their buffer, not the frozen base): plain and ZeRO at 2 processes agree exactly.
  void zero_shards_lora_adapters() {
    const QStringList args = {"train",     "--recipe", "pretrain", "--model", m_model, "--data",     m_text,
                              "--steps",   "6",        "--batch",  "4",       "--seq", "32",         "--lr",
                              "1e-2",      "--lora-rank", "4",     "--val-every", "0", "--threads", "1",
                              "--seed",    "5"};
    const Run plain = mpirun(2, QStringList(args) << "--out" << m_dir.path() + "/zlora-plain");
    QVERIFY2(plain.code == 0, plain.err.constData());
    const Run zero = mpirun(2, QStringList(args) << "--zero" << "1" << "--out" << m_dir.path() + "/zlora-zero");
    QVERIFY2(zero.code == 0, zero.err.constData());
    const QList<QJsonObject> p = jsonLines(plain.out), z = jsonLines(zero.out);
    QCOMPARE(z.size(), 6);
    QVERIFY(z[0]["optimizer_bytes"].toDouble() < p[0]["optimizer_bytes"].toDouble());
    compareCurves(z, p, 0.0);
    QVERIFY(fileBytes(m_dir.path() + "/zlora-zero/adapter/adapter_model.safetensors") ==
            fileBytes(m_dir.path() + "/zlora-plain/adapter/adapter_model.safetensors"));
  }

  // A ZeRO run at 2 cut after step 2 resumes at 1 without ZeRO and at 2 and 3 with it; its checkpoint is the one an
  // unsharded run at 2 writes, byte for byte.
  void zero_checkpoint_resumes_at_one_two_and_three() {
    const QStringList args = {"train",   "--recipe",    "sft",  "--model",      m_model, "--data", m_chat,
                              "--steps", "5",           "--batch", "6",         "--seq", "48",     "--lr",
                              "3e-3",    "--val-every", "0",    "--save-every", "2",     "--keep", "0",
                              "--threads", "1",         "--seed", "6",          "--chat-template", "chatml"};
    const QString straight = m_dir.path() + "/zresume-straight";
    const Run full = mpirun(2, QStringList(args) << "--zero" << "1" << "--out" << straight);
    QVERIFY2(full.code == 0, full.err.constData());
    const QList<QJsonObject> want = jsonLines(full.out);
    QCOMPARE(want.size(), 5);
    const Run plain = mpirun(2, QStringList(args) << "--out" << m_dir.path() + "/zresume-plain");
    QVERIFY2(plain.code == 0, plain.err.constData());
    const QByteArray ckpt = fileBytes(straight + "/checkpoints/ckpt_00000002.safetensors");
    QVERIFY(ckpt.size() > 1000);
    QVERIFY(ckpt == fileBytes(m_dir.path() + "/zresume-plain/checkpoints/ckpt_00000002.safetensors"));
    for (int world : {1, 2, 3}) {
      const QString cut = m_dir.path() + "/zresume-at-" + QString::number(world);
      QVERIFY(QDir().mkpath(cut + "/checkpoints"));
      QVERIFY(QFile::copy(straight + "/checkpoints/ckpt_00000002.safetensors",
                          cut + "/checkpoints/ckpt_00000002.safetensors"));
      QStringList resume = QStringList(args) << "--out" << cut << "--resume";
      if (world > 1) resume << "--zero" << "1";
      const Run r = world == 1 ? cli(resume) : mpirun(world, resume);
      QVERIFY2(r.code == 0, r.err.constData());
      QVERIFY2(r.err.contains("resuming at step 2 of 5"), r.err.constData());
      compareCurves(jsonLines(r.out), want.mid(2), world == 2 ? 0.0 : 2e-5);
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

  void zero_is_refused_where_it_does_not_apply() {
    const QString prefs = m_dir.path() + "/prefs-zero.jsonl";
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "20", "--seed", "1", "--out", prefs}).code, 0);
    Run r = cli({"train", "--recipe", "dpo", "--model", m_model, "--data", prefs, "--out", m_dir.path() + "/dpo-z",
                 "--steps", "1", "--threads", "1", "--zero", "1"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("--zero 1 applies to --recipe pretrain and sft"), r.err.constData());
    r = cli({"train", "--recipe", "pretrain", "--model", m_model, "--data", m_text, "--out", m_dir.path() + "/z2",
             "--steps", "1", "--threads", "1", "--zero", "2"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("--zero"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestDataParallel)
#include "test_data_parallel.moc"
