// llm-workbench-cli end to end, as a user runs it: the DESIGN.md §5 JSON contract, determinism, and
// one clear stderr line + non-zero exit for every kind of bad input.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>

#include <cmath>

#include <csignal>
#include <sys/types.h>

namespace {

struct Run {
  int code;
  QByteArray out, err;
};

Run cli(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(QStringLiteral(WB_CLI_PATH), args);
  if (!p.waitForFinished(300000)) {
    p.kill();
    return {-1, {}, "timeout"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput(),
          p.readAllStandardError()};
}

QJsonObject json_of(const Run& r) {
  QJsonParseError e{};
  const QJsonDocument d = QJsonDocument::fromJson(r.out, &e);
  if (e.error != QJsonParseError::NoError) qWarning() << "bad JSON:" << r.out.left(300) << r.err;
  return d.object();
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model;
  QString m_tiny_chat;  // tinyChatModel()'s directory once made

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.path() + "/starter";
    const Run r = cli({"init", "--preset", "starter", "--seed", "7", "--out", m_model, "--tokenizer",
                       QStringLiteral(WB_SOURCE_DIR) + "/resources/tokenizers/gpt2"});
    QVERIFY2(r.code == 0, r.err.constData());
  }

  void tokenize_json_matches_gpt2() {
    const Run r = cli({"tokenize", "--model", m_model, "--text", "Hello world", "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject o = json_of(r);
    QCOMPARE(o["ids"].toArray(), QJsonArray({15496, 995}));
    QCOMPARE(o["pieces"].toArray(), QJsonArray({"Hello", " world"}));
  }

  // tokenize reads a GGUF's own vocabulary, as generate does, also from a vocabulary-only file (no
  // tensors, like llama.cpp's models/ggml-vocab-*.gguf); a non-GGUF file named .gguf says what it is.
  void tokenize_reads_gguf_vocabularies() {
    const QString data = QStringLiteral(WB_SOURCE_DIR) + "/tests/data/gguf/";
    QFile f(data + "tokens.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject want = QJsonDocument::fromJson(f.readAll()).object();
    for (const QString& file : {QString("vocab-only-gpt2.gguf"), QString("tiny-gpt2-f32.gguf")}) {
      const Run r = cli({"tokenize", "--model", data + file, "--text", want["sample"].toString(), "--json"});
      QVERIFY2(r.code == 0, r.err.constData());
      QCOMPARE(json_of(r)["ids"].toArray(), want["bpe_ids"].toArray());
    }
    const QString gguf = m_dir.path() + "/tokenize-starter.gguf";
    Run r = cli({"convert", "--in", m_model, "--out", gguf});
    QVERIFY2(r.code == 0, r.err.constData());
    r = cli({"tokenize", "--model", gguf, "--text", "Hello world", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(json_of(r)["ids"].toArray(), QJsonArray({15496, 995}));
    const QString bad = m_dir.path() + "/not-a-model.gguf";
    QFile b(bad);
    QVERIFY(b.open(QIODevice::WriteOnly));
    b.write("PK\x03\x04zip");
    b.close();
    r = cli({"tokenize", "--model", bad, "--text", "hi"});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(r.err.contains("not a GGUF file") && r.err.contains("bad magic 'PK"), r.err.constData());
  }

  void generate_json_contract() {
    const Run r = cli({"generate", "--model", m_model, "--prompt", "Once upon a time", "--max-tokens", "8", "--seed",
                       "3", "--top-logprobs", "3", "--ignore-eos", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject o = json_of(r);
    QCOMPARE(o["prompt_tokens"].toArray().size(), 4);
    const QJsonArray tokens = o["tokens"].toArray();
    QCOMPARE(tokens.size(), 8);
    QString joined;
    for (const auto& tv : tokens) {
      const QJsonObject t = tv.toObject();
      QVERIFY(t.contains("id") && t.contains("text") && t.contains("logprob"));
      QVERIFY(t["logprob"].toDouble() <= 0.0);
      const QJsonArray top = t["top_logprobs"].toArray();
      QCOMPARE(top.size(), 3);
      for (int i = 1; i < 3; ++i)
        QVERIFY(top[i - 1].toObject()["logprob"].toDouble() >= top[i].toObject()["logprob"].toDouble());
      joined += t["text"].toString();
    }
    QCOMPARE(o["text"].toString(), joined);
    const QJsonObject st = o["stats"].toObject();
    for (const char* k :
         {"prompt_tokens", "generated_tokens", "prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms"})
      QVERIFY2(st.contains(k), k);
    QCOMPARE(st["generated_tokens"].toInt(), 8);
  }

  void same_seed_same_text() {
    const QStringList args = {"generate", "--model", m_model,         "--prompt", "The",          "--max-tokens", "12",
                              "--seed",   "11",      "--temperature", "1.0",      "--ignore-eos", "--json"};
    const QString a = json_of(cli(args))["text"].toString();
    QCOMPARE(json_of(cli(args))["text"].toString(), a);
    QStringList other = args;
    other[other.indexOf("11")] = "12";
    QVERIFY(json_of(cli(other))["text"].toString() != a);
  }

  void bench_json() {
    const Run r = cli(
        {"bench", "--model", m_model, "--prompt-tokens", "16", "--gen-tokens", "4", "--repetitions", "1", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject o = json_of(r);
    QVERIFY(o["prefill_tokens_per_s"].toDouble() > 0);
    QVERIFY(o["decode_tokens_per_s"].toDouble() > 0);
    QVERIFY(o["peak_rss_mb"].toDouble() > 1);
    QVERIFY(o["backend"].toString().startsWith("CPU"));
    QCOMPARE(o["weights"].toString(), QString("f32"));
    // A q8_0 GGUF reports its weights as such (they are used in place, not widened).
    const Run q = cli({"bench", "--model", QString(WB_SOURCE_DIR) + "/tests/data/gguf/tiny-qwen2-q8_0.gguf",
                       "--prompt-tokens", "8", "--gen-tokens", "2", "--repetitions", "1", "--json"});
    QVERIFY2(q.code == 0, q.err.constData());
    QCOMPARE(json_of(q)["weights"].toString(), QString("q8_0"));
    // --parallel decodes several sequences in batched steps and reports their aggregate.
    const Run p = cli({"bench", "--model", m_model, "--prompt-tokens", "4", "--gen-tokens", "3", "--repetitions", "1",
                       "--parallel", "3", "--json"});
    QVERIFY2(p.code == 0, p.err.constData());
    QCOMPARE(json_of(p)["parallel"].toInt(), 3);
    QVERIFY(json_of(p)["decode_tokens_per_s"].toDouble() > 0);
    QCOMPARE(cli({"bench", "--model", m_model, "--parallel", "0"}).code, 2);
  }

  // bench's bytes per decoded token, counted here from the files: every tensor whole, except the
  // looked-up-only embedding tables (wpe; wte when the head is untied), of which one row, plus the
  // KV cache attended over (layers x 2 x kv width x 4 bytes x (tg + 1) / 2 on average over tg tokens).
  void bench_counts_decode_bytes() {
    auto bench = [](const QString& model, const QStringList& extra = {}) {
      const Run r = cli(QStringList{"bench", "--model", model, "--prompt-tokens", "4", "--gen-tokens", "5",
                                    "--repetitions", "1", "--json"} +
                        extra);
      if (r.code != 0) qWarning() << r.err;
      return json_of(r);
    };
    // GPT-2 starter, f32 safetensors, tied head: the sum of the file's tensors less all of wpe but a row.
    QFile st(m_model + "/model.safetensors");
    QVERIFY(st.open(QIODevice::ReadOnly));
    quint64 header_len = 0;
    QCOMPARE(st.read(reinterpret_cast<char*>(&header_len), 8), qint64{8});
    const QJsonObject header = QJsonDocument::fromJson(st.read(static_cast<qint64>(header_len))).object();
    double file_bytes = 0, wpe_bytes = 0, wpe_row = 0;
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") continue;
      const QJsonArray off = it.value().toObject()["data_offsets"].toArray();
      const double n = off[1].toDouble() - off[0].toDouble();
      file_bytes += n;
      if (it.key().endsWith("wpe.weight")) {
        wpe_bytes = n;
        wpe_row = 4.0 * it.value().toObject()["shape"].toArray()[1].toDouble();
      }
    }
    QVERIFY(wpe_bytes > 0);
    const QJsonObject o = bench(m_model);
    QCOMPARE(o["decode_weight_bytes_per_token"].toDouble(), file_bytes - wpe_bytes + wpe_row);
    const double kv = 4 * 2.0 * 128 * 4 * (5 + 1) / 2.0;  // starter: 4 layers, 128 wide
    QCOMPARE(o["decode_kv_bytes_per_token"].toDouble(), kv);
    QCOMPARE(o["decode_bytes_per_token"].toDouble(), file_bytes - wpe_bytes + wpe_row + kv);
    QVERIFY(std::abs(o["decode_gb_per_s"].toDouble() -
                     o["decode_bytes_per_token"].toDouble() * o["decode_tokens_per_s"].toDouble() / 1e9) <
            1e-9 * o["decode_gb_per_s"].toDouble());
    QVERIFY(!o.contains("memory_read_gb_per_s"));

    // A Llama shape in q8_0 (34 bytes per 32 weights, norms f32), untied: one row of wte, all of the
    // head; with --parallel 2 the weights are read once for two tokens.
    const QString tl = m_dir.path() + "/tl", tl_q8 = m_dir.path() + "/tl-q8_0.gguf";
    QCOMPARE(cli({"init", "--preset", "tiny-llama", "--out", tl}).code, 0);
    QCOMPARE(cli({"convert", "--in", tl, "--out", tl_q8, "--to", "gguf", "--dtype", "q8_0"}).code, 0);
    const double L = 2, C = 64, F = 160, KVW = 32, V = 512;  // the tiny-llama preset
    const double matrices = L * (2 * C * C + 2 * KVW * C + 3 * F * C) + V * C;
    const double weights = (matrices + C) * 34 / 32 + (2 * L * C + C) * 4;
    const QJsonObject q = bench(tl_q8, {"--parallel", "2"});
    QCOMPARE(q["weights"].toString(), QString("q8_0"));
    QCOMPARE(q["decode_weight_bytes_per_token"].toDouble(), weights / 2);
    QCOMPARE(q["decode_kv_bytes_per_token"].toDouble(), L * 2 * KVW * 4 * (5 + 1) / 2);

    // --memory-bandwidth: this machine's read speed, and decode's GB/s as a fraction of it.
    const QJsonObject m = bench(tl_q8, {"--memory-bandwidth"});
    QVERIFY(m["memory_read_gb_per_s"].toDouble() > 0.1);
    QVERIFY(m["memory_read_buffer_bytes"].toDouble() >= 1 << 30);
    QCOMPARE(m["decode_bandwidth_fraction"].toDouble(),
             m["decode_gb_per_s"].toDouble() / m["memory_read_gb_per_s"].toDouble());
  }

  // OpenBLAS's own pick of kernels is replaced when it is below the CPU's level (engine/blas_core.h);
  // WB_ASSUME_BLAS_CORE makes the CLI believe OpenBLAS picked its SSE3 fallback on this machine.
  void generic_blas_kernels_are_replaced() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("OPENBLAS_CORETYPE");
    env.insert("WB_ASSUME_BLAS_CORE", "Prescott");
    const QStringList args{"bench", "--model",       m_model, "--prompt-tokens", "4", "--gen-tokens",
                           "2",     "--repetitions", "1",     "--json"};
    const Run r = cli(args, env);
    QVERIFY2(r.code == 0, r.err.constData());
    const QString backend = json_of(r)["backend"].toString();
    QFile cpuinfo("/proc/cpuinfo");
    QVERIFY(cpuinfo.open(QIODevice::ReadOnly));
    if (!cpuinfo.readAll().contains(" avx ")) QSKIP("this CPU has no AVX: the SSE kernels are its best");
    QVERIFY2(backend.contains(", not Prescott)") && !backend.contains("OpenBLAS (Prescott"), qPrintable(backend));
    // A core the user set is theirs, even when it is the slow one.
    env.insert("OPENBLAS_CORETYPE", "Prescott");
    const Run u = cli(args, env);
    QVERIFY2(u.code == 0, u.err.constData());
    QCOMPARE(json_of(u)["backend"].toString().section(", ", 2), QString("OpenBLAS (Prescott)"));
  }

  void bad_input_gives_one_clear_line_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("needle");
    QTest::newRow("no command") << QStringList{} << "usage";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
    QTest::newRow("unknown flag") << QStringList{"generate", "--modle", "x"} << "unknown flag --modle";
    QTest::newRow("missing value") << QStringList{"generate", "--model"} << "needs a value";
    QTest::newRow("missing model flag") << QStringList{"generate", "--prompt", "hi"} << "missing required flag --model";
    QTest::newRow("missing model file") << QStringList{"generate", "--model", "/nonexistent", "--prompt", "hi"}
                                        << "no such file";
    QTest::newRow("bad number") << QStringList{"generate", "--model", "x", "--prompt", "y", "--temperature", "hot"}
                                << "must be a number";
    QTest::newRow("out of range") << QStringList{"generate", "--model", "x", "--prompt", "y", "--top-p", "2"}
                                  << "must be in";
    // Every setting's range comes from the settings' field table, integers included.
    QTest::newRow("top-k out of range") << QStringList{"generate", "--model", "x", "--prompt", "y", "--top-k", "-1"}
                                        << "--top-k must be in [0, 16777216]";
    QTest::newRow("seed below -1") << QStringList{"generate", "--model", "x", "--prompt", "y", "--seed", "-2"}
                                   << "--seed must be in";
    QTest::newRow("penalty out of range")
        << QStringList{"generate", "--model", "x", "--prompt", "y", "--presence-penalty", "101"}
        << "--presence-penalty must be in [-100, 100]";
    QTest::newRow("bad bias") << QStringList{"generate", "--model", "x", "--prompt", "y", "--logit-bias", "abc"}
                              << "ID=BIAS";
    QTest::newRow("bench missing model") << QStringList{"bench", "--model", "/nonexistent"} << "no such file";
    QTest::newRow("system without chat") << QStringList{"generate", "--model", "x", "--prompt", "y", "--system", "s"}
                                         << "need --chat";
    QTest::newRow("unknown template") << QStringList{"generate", "--model", "x",          "--prompt",
                                                     "y",        "--chat",  "--template", "jinja"}
                                      << "--template must be";
    QTest::newRow("special with chat") << QStringList{"generate", "--model", "x",        "--prompt",
                                                      "y",        "--chat",  "--special"}
                                       << "--special cannot";
  }
  void bad_input_gives_one_clear_line() {
    QFETCH(QStringList, args);
    QFETCH(QString, needle);
    const Run r = cli(args);
    QVERIFY(r.code > 0);  // a clean non-zero exit, not a signal
    const QString all = QString::fromUtf8(r.err + r.out);
    QVERIFY2(all.contains(needle, Qt::CaseInsensitive), qPrintable(all));
  }

  void convert_quantize_eval_round_trip() {
    // HF -> GGUF (target from the extension) -> HF: the same greedy text and token ids all the way.
    const QString gguf = m_dir.path() + "/starter.gguf", hf = m_dir.path() + "/starter-back",
                  q8 = m_dir.path() + "/starter-q8.gguf";
    Run r = cli({"convert", "--in", m_model, "--out", gguf});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.err.contains("wrote") && r.err.contains("%]"));  // progress on stderr
    r = cli({"convert", "--in", gguf, "--out", hf + "/"});     // a trailing slash names the same directory
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(QFile::exists(hf + "/vocab.json") && QFile::exists(hf + "/merges.txt") &&
            QFile::exists(hf + "/config.json"));
    const QStringList gen = {"--prompt", "Once upon a time", "--max-tokens", "6", "--temperature",
                             "0",        "--ignore-eos",     "--json"};
    const QJsonObject a = json_of(cli(QStringList{"generate", "--model", m_model} + gen)),
                      b = json_of(cli(QStringList{"generate", "--model", gguf} + gen)),
                      c = json_of(cli(QStringList{"generate", "--model", hf} + gen));
    QVERIFY(!a["text"].toString().isEmpty());
    QCOMPARE(b["text"].toString(), a["text"].toString());
    QCOMPARE(c["text"].toString(), a["text"].toString());
    QCOMPARE(b["prompt_tokens"].toArray(), a["prompt_tokens"].toArray());
    // quantize: a smaller file whose predictions stay close to the f32 reference.
    r = cli({"quantize", "--in", m_model, "--out", q8, "--type", "q8_0"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(QFileInfo(q8).size() < QFileInfo(gguf).size() / 3);
    r = cli({"eval", "--model", q8, "--task", "perplexity", "--data",
             QStringLiteral(WB_SOURCE_DIR) + "/tests/data/eval/heldout_prose.txt", "--ctx", "128", "--max-tokens",
             "300", "--reference", gguf, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject e = json_of(r);
    QCOMPARE(e["task"].toString(), QStringLiteral("perplexity"));
    QCOMPARE(e["n"].toInt(), 300 - 3);  // windows of 128, 128, 44 tokens: one unscored token each
    QVERIFY(e["perplexity"].toDouble() > 1.0);
    QVERIFY(e["kl_vs_reference"].toDouble() > 0.0 && e["kl_vs_reference"].toDouble() < 0.05);
    QVERIFY(e["top1_agreement"].toDouble() > 0.5 && e["top1_agreement"].toDouble() <= 1.0);
    // Against itself: no divergence.
    r = cli({"eval", "--model", gguf, "--task", "perplexity", "--data",
             QStringLiteral(WB_SOURCE_DIR) + "/tests/data/eval/heldout_prose.txt", "--ctx", "64", "--max-tokens", "100",
             "--reference", m_model, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(json_of(r)["kl_vs_reference"].toDouble(), 0.0);
    QCOMPARE(json_of(r)["top1_agreement"].toDouble(), 1.0);
  }

  // The 4- and 5-bit types: a file under a third of f32's (embedding and head kept at q8_0) whose
  // predictions stay near the f32 model's (measured KL: q4_1 3e-4, the q5 types 1e-4; a wrong layout
  // gives KL of order 1). q5_K is spelled as llama.cpp does; in this GPT-2 starter (C = 128) only the
  // 512-wide MLP projections are whole q5_K blocks, the 128-wide rows take q5_1.
  void quantize_low_bit_types_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<double>("max_kl");
    for (const char* t : {"q4_1", "q5_0", "q5_1", "Q5_K"}) QTest::newRow(t) << t << (t[1] == '4' ? 3e-3 : 1.5e-3);
  }
  void quantize_low_bit_types() {
    QFETCH(QString, type);
    QFETCH(double, max_kl);
    const QString out = m_dir.path() + "/starter-" + type + ".gguf", f32 = m_dir.path() + "/starter-f32.gguf";
    if (!QFile::exists(f32)) QCOMPARE(cli({"convert", "--in", m_model, "--out", f32}).code, 0);
    Run r = cli({"quantize", "--in", m_model, "--out", out, "--type", type});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.err.contains(("GGUF " + type.toLower().replace("q5_k", "q5_K")).toUtf8()));
    QVERIFY(QFileInfo(out).size() < QFileInfo(f32).size() / 3);
    r = cli({"eval", "--model", out, "--task", "perplexity", "--data",
             QStringLiteral(WB_SOURCE_DIR) + "/tests/data/eval/heldout_prose.txt", "--ctx", "128", "--max-tokens",
             "300", "--reference", f32, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject e = json_of(r);
    qInfo("%s: KL %.2g, top-1 agreement %.3f", qPrintable(type), e["kl_vs_reference"].toDouble(),
          e["top1_agreement"].toDouble());
    QVERIFY(e["kl_vs_reference"].toDouble() > 0.0 && e["kl_vs_reference"].toDouble() < max_kl);
    QVERIFY(e["top1_agreement"].toDouble() > 0.5);
  }

  void convert_errors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("needle");
    const QString out = "/nonexistent-dir-wb/x.gguf";
    QTest::newRow("missing input") << QStringList{"convert", "--in", "/nonexistent-model", "--out", "/tmp/wb-x.gguf"}
                                   << 1 << "no such file";
    QTest::newRow("bad dtype") << QStringList{"convert", "--in", "x", "--out", "y.gguf", "--dtype", "q5"} << 2
                               << "--dtype must be one of";
    QTest::newRow("bad target") << QStringList{"convert", "--in", "x", "--out", "y", "--to", "onnx"} << 2
                                << "--to must be gguf or hf";
    QTest::newRow("dtype for hf") << QStringList{"convert", "--in", "x", "--out", "y", "--dtype", "q8_0"} << 2
                                  << "GGUF output only";
    QTest::newRow("quantize float type") << QStringList{"quantize", "--in", "x", "--out", "y.gguf", "--type", "f16"}
                                         << 2 << "--type must be one of";
    QTest::newRow("quantize missing type")
        << QStringList{"quantize", "--in", "x", "--out", "y.gguf"} << 2 << "missing required flag --type";
    QTest::newRow("eval bad task") << QStringList{"eval", "--model", "x", "--task", "mmlu", "--data", "y"} << 2
                                   << "--task must be perplexity, arith, facts, chat or reward";
    QTest::newRow("eval items from a file and generated")
        << QStringList{"eval", "--model", "x", "--task", "arith", "--data", "y", "--n", "5"} << 2 << "cannot be used with --data";
    QTest::newRow("eval ctx for a task") << QStringList{"eval", "--model", "x", "--task", "facts", "--ctx", "8"} << 2
                                         << "--ctx is for --task perplexity only";
    QTest::newRow("eval n for perplexity")
        << QStringList{"eval", "--model", "x", "--task", "perplexity", "--data", "y", "--n", "5"} << 2
        << "--n is for --task arith, facts or chat";
    QTest::newRow("eval missing data")
        << QStringList{"eval", "--model", "x", "--task", "perplexity", "--data", "/nonexistent-data.txt"} << 1
        << "cannot open";
  }
  void convert_errors() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, needle);
    const Run r = cli(args);
    QCOMPARE(r.code, code);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(QString::fromUtf8(r.err).contains(needle), r.err.constData());
  }

  void convert_to_unwritable_place_leaves_nothing() {
    QTemporaryDir d;
    // A missing parent directory, for GGUF and HF outputs.
    Run r = cli({"convert", "--in", m_model, "--out", d.path() + "/no/such/dir/x.gguf"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("does not exist"), r.err.constData());
    r = cli({"convert", "--in", m_model, "--out", d.path() + "/no/such/dir/hf"});
    QCOMPARE(r.code, 1);
    // A GGUF output that is a directory; an HF output over a non-empty directory.
    QVERIFY(QDir(d.path()).mkpath("taken"));
    QFile keep(d.path() + "/taken/mine.txt");
    QVERIFY(keep.open(QIODevice::WriteOnly));
    keep.close();
    r = cli({"convert", "--in", m_model, "--out", d.path() + "/taken", "--to", "gguf"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("is a directory"), r.err.constData());
    r = cli({"convert", "--in", m_model, "--out", d.path() + "/taken"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("not empty"), r.err.constData());
    QCOMPARE(QDir(d.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList{"taken"});
    QCOMPARE(QDir(d.path() + "/taken").entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList{"mine.txt"});
  }

  void per_command_help() {
    const Run r = cli({"generate", "--help"});
    QCOMPARE(r.code, 0);
    for (const char* flag :
         {"--model", "--prompt", "--temperature", "--top-k", "--top-p", "--min-p", "--seed", "--stop", "--json"})
      QVERIFY2(r.out.contains(flag), flag);
    // The settings' flags with the table's defaults, and the flags of generate alone after them.
    for (const char* line :
         {"--max-tokens X\tmost tokens to generate (default 128)",
          "--temperature X\tsampling temperature, 0 = greedy (default 0.8)",
          "--top-k X\tkeep the K most likely tokens, 0 = off (default 40)",
          "--repeat-last-n X\tpenalty window in tokens, -1 = all (default 64)",
          "--seed X\trandom seed, -1 = random (default: random, reported in --json)",
          "--top-logprobs X\treport K alternatives per token (default 0)", "--stop X\tstop string (repeatable)",
          "--logit-bias X", "--ignore-eos", "--chat", "--threads X"})
      QVERIFY2(r.out.contains(line), line);
  }

  void corrupt_model_is_an_error_not_a_crash() {
    QTemporaryDir d;
    QFile::copy(m_model + "/config.json", d.path() + "/config.json");
    QFile f(d.path() + "/model.safetensors");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray("\xff\xff\xff\xff\xff\xff\xff\x7f{garbage", 17));
    f.close();
    const Run r = cli({"generate", "--model", d.path(), "--prompt", "hi"});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY(r.err.contains("model.safetensors"));
  }

  void logit_bias_bans_and_forces() {
    // Forcing token 13 ("." in GPT-2) with a huge bias must make every generated token 13.
    const Run r = cli({"generate", "--model", m_model, "--prompt", "Hi", "--max-tokens", "3", "--seed", "1",
                       "--logit-bias", "13=100", "--ignore-eos", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    for (const auto& t : json_of(r)["tokens"].toArray()) QCOMPARE(t.toObject()["id"].toInt(), 13);
  }

  void stop_string_ends_generation() {
    const QStringList base = {"generate", "--model",       m_model, "--prompt",     "A",     "--max-tokens",
                              "20",       "--temperature", "0",     "--ignore-eos", "--json"};
    const QString free_text = json_of(cli(base))["text"].toString();
    QVERIFY(free_text.size() > 4);
    const QString stop = free_text.mid(free_text.size() / 2, 2);
    QStringList with_stop = base;
    with_stop << "--stop" << stop;
    const QJsonObject o = json_of(cli(with_stop));
    QCOMPARE(o["finish_reason"].toString(), QStringLiteral("stop"));
    QCOMPARE(o["text"].toString(), free_text.left(free_text.indexOf(stop)));
  }

  // --- train (issue 5) -------------------------------------------------------------------------------
  QString writeStories() {
    // Simple, repetitive English: a model that learns anything at all lowers its loss on it quickly.
    const QString path = m_dir.path() + "/stories.txt";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    const char* names[] = {"Tom", "Ana", "Lily", "Max"};
    const char* things[] = {"ball", "cat", "tree", "boat"};
    for (int i = 0; i < 200; ++i)
      f.write(QString("%1 saw a %2. The %2 was big. ").arg(names[i % 4], things[(i / 4) % 4]).toUtf8() +
              (i % 5 == 4 ? "\n" : ""));
    return path;
  }

  // The resume check of a recipe: `args` for 4 steps into `straight_dir`, and for 2 steps then 2 more
  // with --resume into `resumed_dir`; fills the straight run's 4 lines and the resumed run's 2.
  void straightAndResumed(const QStringList& args, const QString& straight_dir, const QString& resumed_dir,
                          QList<QJsonObject>& straight, QList<QJsonObject>& resumed) {
    Run r = cli(QStringList(args) << "--out" << straight_dir << "--steps" << "4");
    QVERIFY2(r.code == 0, r.err.constData());
    straight = jsonLines(r.out);
    QCOMPARE(cli(QStringList(args) << "--out" << resumed_dir << "--steps" << "2").code, 0);
    r = cli(QStringList(args) << "--out" << resumed_dir << "--steps" << "4" << "--resume");
    QVERIFY2(r.code == 0, r.err.constData());
    resumed = jsonLines(r.out);
  }

  static QList<QJsonObject> jsonLines(const QByteArray& out) {
    QList<QJsonObject> lines;
    for (const QByteArray& l : out.split('\n'))
      if (!l.trimmed().isEmpty()) lines << QJsonDocument::fromJson(l).object();
    return lines;
  }

  void train_pretrain_prints_steps_and_writes_a_loadable_model() {
    const QString data = writeStories(), out = m_dir.path() + "/trained", metrics = m_dir.path() + "/metrics.jsonl";
    const Run r = cli({"train",       "--recipe", "pretrain",       "--model",    m_model,     "--data",    data,
                       "--out",       out,        "--steps",        "8",          "--batch",   "2",         "--seq",
                       "32",          "--lr",     "3e-3",           "--schedule", "constant",  "--shuffle", "off",
                       "--val-every", "4",        "--val-fraction", "0.1",        "--metrics", metrics});
    QVERIFY2(r.code == 0, r.err.constData());
    const QList<QJsonObject> lines = jsonLines(r.out);
    QCOMPARE(lines.size(), 8);
    for (int i = 0; i < lines.size(); ++i) {
      const QJsonObject& o = lines[i];
      QCOMPARE(o["step"].toInt(), i + 1);
      for (const char* k : {"loss", "lr", "grad_norm", "tokens_per_s"}) QVERIFY2(o[k].isDouble(), k);
      QCOMPARE(o["lr"].toDouble(), 3e-3);
      QCOMPARE(o.contains("val_loss"), i == 3 || i == 7);
    }
    const double first = lines[0]["loss"].toDouble(),
                 last = (lines[6]["loss"].toDouble() + lines[7]["loss"].toDouble()) / 2;
    QVERIFY2(last < first - 1.0, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
    QVERIFY(lines[7]["val_loss"].toDouble() < lines[3]["val_loss"].toDouble());
    // The metrics file holds the same lines.
    QFile m(metrics);
    QVERIFY(m.open(QIODevice::ReadOnly));
    QCOMPARE(jsonLines(m.readAll()), lines);
    // The output is a model directory the other commands open, and it has changed.
    QVERIFY(QFileInfo::exists(out + "/checkpoints/ckpt_00000008.safetensors"));
    const Run g = cli({"eval", "--model", out, "--task", "perplexity", "--data", data, "--ctx", "32", "--max-tokens",
                       "256", "--json"});
    QVERIFY2(g.code == 0, g.err.constData());
    const Run g0 = cli({"eval", "--model", m_model, "--task", "perplexity", "--data", data, "--ctx", "32",
                        "--max-tokens", "256", "--json"});
    QVERIFY(json_of(g)["perplexity"].toDouble() < json_of(g0)["perplexity"].toDouble() / 3);
  }

  void train_lora_writes_adapters_and_a_merged_model() {
    const QString data = writeStories(), out = m_dir.path() + "/lora";
    const Run r = cli({"train",       "--recipe", "pretrain",    "--model",    m_model,        "--data",    data,
                       "--out",       out,        "--steps",     "8",          "--batch",      "2",         "--seq",
                       "32",          "--lr",     "1e-2",        "--schedule", "constant",     "--shuffle", "off",
                       "--val-every", "0",        "--lora-rank", "4",          "--lora-alpha", "8"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QList<QJsonObject> lines = jsonLines(r.out);
    QCOMPARE(lines.size(), 8);
    QVERIFY(lines[7]["loss"].toDouble() < lines[0]["loss"].toDouble());
    // The adapters in PEFT's layout...
    QFile cfg(out + "/adapter/adapter_config.json");
    QVERIFY(cfg.open(QIODevice::ReadOnly));
    const QJsonObject c = QJsonDocument::fromJson(cfg.readAll()).object();
    QCOMPARE(c["r"].toInt(), 4);
    QCOMPARE(c["lora_alpha"].toDouble(), 8.0);
    QVERIFY(QFileInfo(out + "/adapter/adapter_model.safetensors").size() > 0);
    // ...and the merged model, which is no longer the base model: its perplexity on the training text fell.
    const QStringList eval = {"eval",  "--task", "perplexity",   "--data", data,
                              "--ctx", "32",     "--max-tokens", "256",    "--json"};
    const Run merged = cli(QStringList(eval) << "--model" << out),
              base = cli(QStringList(eval) << "--model" << m_model);
    QVERIFY2(merged.code == 0, merged.err.constData());
    QVERIFY(json_of(merged)["perplexity"].toDouble() < json_of(base)["perplexity"].toDouble());
    // LoRA options without a rank are a usage error.
    const Run bad = cli({"train", "--recipe", "pretrain", "--model", m_model, "--data", data, "--out", out + "-x",
                         "--lora-alpha", "8"});
    QCOMPARE(bad.code, 2);
  }

  void train_resume_continues_exactly() {
    const QString data = writeStories(), a = m_dir.path() + "/run-a", b = m_dir.path() + "/run-b";
    const QStringList common = {"train", "--recipe",     "pretrain", "--model",  m_model, "--data",
                                data,    "--steps",      "4",        "--batch",  "2",     "--seq",
                                "16",    "--lr",         "2e-3",     "--warmup", "1",     "--dropout",
                                "0.1",   "--save-every", "2",        "--keep",   "0",     "--val-every",
                                "0",     "--seed",       "5"};
    const Run ra = cli(QStringList(common) << "--out" << a);
    QVERIFY2(ra.code == 0, ra.err.constData());
    const Run rb = cli(QStringList(common) << "--out" << b);
    QVERIFY2(rb.code == 0, rb.err.constData());
    // Pretend run b died after step 2: its step-4 checkpoint never got written.
    QVERIFY(QFile::remove(b + "/checkpoints/ckpt_00000004.safetensors"));
    QVERIFY(QFile::remove(b + "/model.safetensors"));
    const Run rr = cli(QStringList(common) << "--out" << b << "--resume");
    QVERIFY2(rr.code == 0, rr.err.constData());
    const QList<QJsonObject> straight = jsonLines(ra.out), resumed = jsonLines(rr.out);
    QCOMPARE(resumed.size(), 2);
    for (int i = 0; i < 2; ++i) {
      QCOMPARE(resumed[i]["step"].toInt(), i + 3);
      QCOMPARE(resumed[i]["loss"].toDouble(), straight[i + 2]["loss"].toDouble());
      QCOMPARE(resumed[i]["grad_norm"].toDouble(), straight[i + 2]["grad_norm"].toDouble());
    }
    QFile fa(a + "/model.safetensors"), fb(b + "/model.safetensors");
    QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
    QVERIFY(fa.readAll() == fb.readAll());  // the same weights, bit for bit
    // Changing a setting that shapes the run is refused by name.
    const Run bad = cli(QStringList(common) << "--out" << b << "--resume"
                                            << "--batch"
                                            << "3");
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("batch"), bad.err.constData());
  }

  void train_sft_on_chat_jsonl() {
    const QString data = m_dir.path() + "/chat.jsonl", out = m_dir.path() + "/sft";
    QFile f(data);
    QVERIFY(f.open(QIODevice::WriteOnly));
    for (int i = 0; i < 6; ++i)
      f.write(
          QString(
              R"({"messages":[{"role":"user","content":"What is %1 plus %1?"},{"role":"assistant","content":"%2"}]})")
              .arg(i)
              .arg(2 * i)
              .toUtf8() +
          "\n");
    f.close();
    const Run r = cli({"train", "--recipe", "sft", "--model", m_model, "--data", data, "--out", out, "--steps", "3",
                       "--batch", "2", "--seq", "64", "--chat-template", "chatml", "--val-every", "0"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(jsonLines(r.out).size(), 3);
    QVERIFY(r.err.contains("6 conversations (messages), template 'chatml'"));
    QVERIFY(QFileInfo::exists(out + "/model.safetensors"));
  }

  // Preference training end to end on a tiny model (2 layers, 64 wide, a 400-token BPE learnt from the pairs):
  // the reward model ranks held-out pairs well above chance, eval --task reward agrees on the eval split;
  // DPO starts at loss log 2 with zero rewards (the reference is the starting model) and its held-out
  // reward accuracy and margin rise; a resumed DPO run continues bit for bit; LoRA DPO writes its adapter.
  void train_reward_model_and_dpo_on_synth_prefs() {
    const QString d = m_dir.path() + "/align", prefs = d + "/prefs.jsonl", eval = d + "/prefs-eval.jsonl";
    QVERIFY(QDir().mkpath(d));
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "300", "--seed", "1", "--out", prefs}).code, 0);
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "80", "--seed", "2", "--split", "eval", "--out", eval})
                 .code,
             0);
    QCOMPARE(cli({"tokenizer", "train", "--data", prefs, "--vocab-size", "400", "--out", d + "/tok"}).code, 0);
    const QString model = d + "/tiny";
    QCOMPARE(cli({"init", "--preset", "tiny", "--vocab", "400", "--context", "96", "--tokenizer", d + "/tok", "--out",
                  model})
                 .code,
             0);
    const QStringList common = {"--model",        model, "--data",        prefs,  "--batch",         "8",
                                "--seq",          "64",  "--lr",          "1e-3", "--threads",       "2",
                                "--val-fraction", "0.1", "--val-batches", "4",    "--chat-template", "chatml"};

    const QString rm = d + "/rm";
    Run r = cli(QStringList{"train", "--recipe", "reward", "--out", rm, "--steps", "60", "--val-every", "20"} + common);
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.err.contains("300 preference pairs (prompt/chosen/rejected), template 'chatml'"), r.err.constData());
    QList<QJsonObject> lines = jsonLines(r.out);
    QCOMPARE(lines.size(), 60);
    for (const char* key : {"loss", "accuracy", "margin", "grad_norm", "lr"}) QVERIFY2(lines[0].contains(key), key);
    QVERIFY(!lines[0].contains("val_accuracy"));
    const QJsonObject last = lines.last();
    QVERIFY2(last["val_accuracy"].toDouble() >= 0.8, qPrintable(QJsonDocument(last).toJson()));
    QVERIFY(last["val_margin"].toDouble() > 0.5);
    QVERIFY(last["val_loss"].toDouble() < std::log(2.0) - 0.2);
    QFile wb(rm + "/workbench.json");
    QVERIFY(wb.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(wb.readAll())["reward_model"]["head"].toString(), QString("score.weight"));
    r = cli({"eval", "--task", "reward", "--model", rm, "--data", eval, "--threads", "2", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(json_of(r)["n"].toInt(), 80);
    QVERIFY2(json_of(r)["accuracy"].toDouble() >= 0.75, r.out.constData());
    // Broken down by the rows' kinds: data synth's three, their counts adding up to the whole.
    const QJsonObject kinds = json_of(r)["kinds"].toObject();
    QCOMPARE(kinds.keys(), (QStringList{"correct", "on_topic", "polite"}));
    int by_kind = 0;
    for (const QJsonValue& k : kinds) {
      by_kind += k.toObject()["n"].toInt();
      QVERIFY(k.toObject()["accuracy"].toDouble() >= 0 && k.toObject()["accuracy"].toDouble() <= 1);
    }
    QCOMPARE(by_kind, 80);
    r = cli({"eval", "--task", "reward", "--model", model, "--data", eval});
    QCOMPARE(r.code, 1);
    QVERIFY(r.err.contains("not a reward model"));

    r = cli(QStringList{"train", "--recipe", "dpo", "--out", d + "/dpo", "--steps", "40", "--val-every", "40"} +
            common);
    QVERIFY2(r.code == 0, r.err.constData());
    lines = jsonLines(r.out);
    QCOMPARE(lines.size(), 40);
    QVERIFY(std::fabs(lines[0]["loss"].toDouble() - std::log(2.0)) < 1e-6);
    QCOMPARE(lines[0]["rewards/margins"].toDouble(), 0.0);
    QCOMPARE(lines[0]["rewards/chosen"].toDouble(), 0.0);
    for (const char* key : {"rewards/rejected", "rewards/accuracies", "logps/chosen", "logps/rejected"})
      QVERIFY2(lines[0].contains(key), key);
    double late_margin = 0;
    for (int i = 30; i < 40; ++i) late_margin += lines[i]["rewards/margins"].toDouble() / 10;
    QVERIFY(late_margin > 0.2);
    QVERIFY2(lines.last()["val_rewards/accuracies"].toDouble() >= 0.75,
             qPrintable(QJsonDocument(lines.last()).toJson()));
    QVERIFY(lines.last()["val_rewards/margins"].toDouble() > 0.2);

    // Resume: 2 steps + 2 resumed = 4 straight (the reference stays the starting model, not the checkpoint).
    const QStringList dpo4 =
        QStringList{"train", "--recipe", "dpo", "--beta", "0.2", "--schedule", "constant", "--val-every", "0"} + common;
    QList<QJsonObject> straight, resumed;
    straightAndResumed(dpo4, d + "/dpo-a", d + "/dpo-b", straight, resumed);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(resumed.size(), 2);
    for (int i = 0; i < 2; ++i) {
      QCOMPARE(resumed[i]["loss"].toDouble(), straight[i + 2]["loss"].toDouble());
      QCOMPARE(resumed[i]["rewards/margins"].toDouble(), straight[i + 2]["rewards/margins"].toDouble());
    }

    r = cli(QStringList{"train", "--recipe", "dpo", "--out", d + "/dpo-lora", "--steps", "3", "--lora-rank", "4",
                        "--val-every", "0"} +
            common);
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(std::fabs(jsonLines(r.out)[0]["loss"].toDouble() - std::log(2.0)) < 1e-6);
    QVERIFY(QFileInfo::exists(d + "/dpo-lora/adapter/adapter_model.safetensors"));
    // A LoRA reward model trains its head beside the adapters and is saved (merged) with it.
    r = cli(QStringList{"train", "--recipe", "reward", "--out", d + "/rm-lora", "--steps", "2", "--lora-rank", "4",
                        "--val-every", "0"} +
            common);
    QVERIFY2(r.code == 0, r.err.constData());
    r = cli({"eval", "--task", "reward", "--model", d + "/rm-lora", "--data", eval, "--threads", "2", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(json_of(r)["n"].toInt(), 80);
  }

  // GRPO end to end on a tiny model that first learns the chat format and a little arithmetic by SFT on
  // synthetic dialogues (2 layers, 64 wide, a BPE learnt from them): TRL's metric names on every step, KL 0 at
  // step 1 (the reference is the starting model), held-out greedy accuracy at validation, the model saved; a
  // resumed run samples and updates exactly as an uninterrupted one; LoRA is refused by name.
  // The online recipes' starting point, made once per run of this test: a tiny model (2 layers, 64 wide, a BPE
  // learnt from synthetic dialogues) that has learnt the chat format and a little arithmetic by SFT, in
  // <dir>/sft, and 200 synthetic prompts with checkable answers in <dir>/prompts.jsonl. Returns <dir>, or "" on
  // failure (the caller's QVERIFY says so).
  QString tinyChatModel() {
    if (!m_tiny_chat.isEmpty()) return m_tiny_chat;
    const QString d = m_dir.path() + "/tiny-chat", chat = d + "/chat.jsonl", prompts = d + "/prompts.jsonl";
    if (!QDir().mkpath(d) ||
        cli({"data", "synth", "--kind", "chat", "--n", "1500", "--seed", "1", "--out", chat}).code != 0 ||
        cli({"data", "synth", "--kind", "prompts", "--n", "200", "--seed", "1", "--out", prompts}).code != 0 ||
        cli({"tokenizer", "train", "--data", chat, "--vocab-size", "400", "--out", d + "/tok"}).code != 0 ||
        cli({"init", "--preset", "tiny", "--vocab", "400", "--context", "96", "--tokenizer", d + "/tok", "--out",
             d + "/tiny"})
                .code != 0)
      return {};
    const Run r = cli({"train",    "--recipe",  "sft", "--model",     d + "/tiny", "--data",          chat,    "--out",
                       d + "/sft", "--steps",   "150", "--batch",     "16",        "--seq",           "64",    "--lr",
                       "3e-3",     "--threads", "2",   "--val-every", "0",         "--chat-template", "chatml"});
    if (r.code != 0) return {};
    m_tiny_chat = d;
    return d;
  }

  void train_grpo_on_synth_prompts() {
    const QString base = tinyChatModel();
    QVERIFY2(!base.isEmpty(), "the tiny chat model could not be made");
    const QString d = m_dir.path() + "/grpo", prompts = base + "/prompts.jsonl";
    QVERIFY(QDir().mkpath(d));
    Run r;
    const QStringList common = {"train",   "--recipe",  "grpo", "--model",         base + "/sft", "--data",
                                prompts,   "--batch",   "4",    "--seq",           "64",       "--lr",
                                "1e-3",    "--threads", "2",    "--chat-template", "chatml",   "--schedule",
                                "constant"};
    r = cli(QStringList(common) << "--out" << d + "/a"
                                << "--steps"
                                << "6"
                                << "--val-every"
                                << "3"
                                << "--val-fraction"
                                << "0.1"
                                << "--val-batches"
                                << "2"
                                << "--group-size"
                                << "4");
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.err.contains("200 prompts, template 'chatml'"), r.err.constData());
    const QList<QJsonObject> lines = jsonLines(r.out);
    QCOMPARE(lines.size(), 6);
    for (const QJsonObject& line : lines)
      for (const char* key : {"loss", "reward", "reward_std", "kl", "completion_length", "clip_ratio",
                              "frac_reward_zero_std", "grad_norm"}) {
        QVERIFY2(line.contains(key) && std::isfinite(line[key].toDouble()), key);
      }
    QCOMPARE(lines[0]["kl"].toDouble(), 0.0);
    QCOMPARE(lines[0]["clip_ratio"].toDouble(), 0.0);
    for (const QJsonObject& line : lines) {
      QVERIFY(line["reward"].toDouble() >= 0 && line["reward"].toDouble() <= 1);
      QVERIFY(line["completion_length"].toDouble() >= 1 && line["completion_length"].toDouble() <= 24 + 1);
    }
    QVERIFY(!lines[0].contains("val_accuracy"));
    QVERIFY(lines[2].contains("val_accuracy") && lines[5].contains("val_accuracy"));
    QVERIFY(lines[5]["val_accuracy"].toDouble() >= 0 && lines[5]["val_accuracy"].toDouble() <= 1);
    QVERIFY(QFileInfo::exists(d + "/a/model.safetensors"));

    // Resume: 2 steps + 2 resumed = 4 straight, metrics and weights bit for bit.
    const QStringList four = QStringList(common) << "--val-every"
                                                 << "0";
    QList<QJsonObject> straight, resumed;
    straightAndResumed(four, d + "/b", d + "/c", straight, resumed);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(resumed.size(), 2);
    for (int i = 0; i < 2; ++i)
      for (const char* key : {"loss", "reward", "kl", "completion_length", "grad_norm"})
        QCOMPARE(resumed[i][key].toDouble(), straight[i + 2][key].toDouble());
    QFile fb(d + "/b/model.safetensors"), fc(d + "/c/model.safetensors");
    QVERIFY(fb.open(QIODevice::ReadOnly) && fc.open(QIODevice::ReadOnly));
    QVERIFY(fb.readAll() == fc.readAll());

    // LoRA: the rollouts come from the adapted policy, the reference is the base (KL 0 while the adapters are 0).
    r = cli(QStringList(four) << "--out" << d + "/lora"
                              << "--steps"
                              << "2"
                              << "--lora-rank"
                              << "4");
    QVERIFY2(r.code == 0, r.err.constData());
    const QList<QJsonObject> lora_lines = jsonLines(r.out);
    QCOMPARE(lora_lines.size(), 2);
    QCOMPARE(lora_lines[0]["kl"].toDouble(), 0.0);
    for (const QJsonObject& line : lora_lines) QVERIFY(std::isfinite(line["loss"].toDouble()));
    QVERIFY(QFileInfo(d + "/lora/adapter/adapter_model.safetensors").size() > 0);

    // The token-mean loss trains; an unknown loss type is a usage error.
    r = cli(QStringList(four) << "--out" << d + "/bnpo"
                              << "--steps"
                              << "1"
                              << "--loss-type"
                              << "bnpo");
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(jsonLines(r.out).size(), 1);
    QVERIFY(std::isfinite(jsonLines(r.out)[0]["loss"].toDouble()));
    QCOMPARE(cli(QStringList(four) << "--out" << d + "/bad"
                                   << "--steps"
                                   << "1"
                                   << "--loss-type"
                                   << "dr_grpo")
                 .code,
             2);
  }

  // PPO end to end on the tiny chat model: TRL's metric names, finite, on every step; KL 0 and ratio-free
  // rollout metrics at step 1 (the reference is the starting model); a few sampled completions with their scores on
  // each line; held-out greedy accuracy at validation; the policy saved without its value head. A resumed run --
  // with the adaptive KL coefficient, which lives in the checkpoint -- samples and updates exactly as an
  // uninterrupted one. A reward model can score instead of exact match, also with LoRA.
  void train_ppo_on_synth_prompts() {
    const QString base = tinyChatModel();
    QVERIFY2(!base.isEmpty(), "the tiny chat model could not be made");
    const QString d = m_dir.path() + "/ppo", metrics = d + "/metrics.jsonl";
    QVERIFY(QDir().mkpath(d));
    const QStringList common = {"train", "--recipe", "ppo",     "--model",         base + "/sft",
                                "--data", base + "/prompts.jsonl", "--batch", "4", "--seq",
                                "64",    "--lr",     "1e-3",    "--threads",       "2",
                                "--chat-template", "chatml", "--schedule", "constant", "--max-new-tokens",
                                "16"};
    Run r = cli(QStringList(common) << "--out" << d + "/a" << "--steps" << "4" << "--val-every" << "2"
                                    << "--val-fraction" << "0.1" << "--val-batches" << "2" << "--metrics" << metrics);
    QVERIFY2(r.code == 0, r.err.constData());
    const QList<QJsonObject> lines = jsonLines(r.out);
    QCOMPARE(lines.size(), 4);
    for (const QJsonObject& line : lines) {
      for (const char* key : {"loss", "grad_norm", "objective/kl", "objective/entropy", "objective/non_score_reward",
                              "objective/rlhf_reward", "objective/scores", "objective/kl_coef",
                              "policy/clipfrac_avg", "policy/approxkl_avg", "loss/policy_avg", "loss/value_avg",
                              "val/clipfrac_avg", "val/ratio", "val/ratio_var", "val/num_eos_tokens",
                              "completion_length"})
        QVERIFY2(line.contains(key) && std::isfinite(line[key].toDouble()), key);
      QVERIFY(line["objective/scores"].toDouble() >= 0 && line["objective/scores"].toDouble() <= 1);
      QVERIFY(line["completion_length"].toDouble() >= 1 && line["completion_length"].toDouble() <= 16 + 1);
      QCOMPARE(line["objective/kl_coef"].toDouble(), 0.05);
      const QJsonArray samples = line["samples"].toArray();
      QCOMPARE(samples.size(), 2);
      for (const QJsonValue& sample : samples) {
        const QJsonObject o = sample.toObject();
        QVERIFY(!o["prompt"].toString().isEmpty() && o.contains("completion"));
        QVERIFY(o["score"].toDouble() == 0.0 || o["score"].toDouble() == 1.0);
      }
    }
    QCOMPARE(lines[0]["objective/kl"].toDouble(), 0.0);
    QVERIFY(lines[1]["objective/kl"].toDouble() != 0.0);  // the first step's updates moved the policy
    QVERIFY(!lines[0].contains("val_accuracy"));
    QVERIFY(lines[1].contains("val_accuracy") && lines[3].contains("val_accuracy"));
    QFile mf(metrics);
    QVERIFY(mf.open(QIODevice::ReadOnly));
    QCOMPARE(jsonLines(mf.readAll()).size(), 4);
    QFile weights(d + "/a/model.safetensors");
    QVERIFY(weights.open(QIODevice::ReadOnly));
    QVERIFY(!weights.readAll().contains("v_head"));

    // Resume: 2 steps + 2 resumed = 4 straight, metrics and weights bit for bit; the adaptive coefficient moves
    // (a short horizon) and so must come back from the checkpoint.
    const QStringList four = QStringList(common) << "--val-every" << "0" << "--target-kl" << "1" << "--kl-horizon"
                                                 << "100" << "--num-minibatches" << "2" << "--ppo-epochs" << "2";
    QList<QJsonObject> straight, resumed;
    straightAndResumed(four, d + "/b", d + "/c", straight, resumed);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(resumed.size(), 2);
    QVERIFY(straight[2]["objective/kl_coef"].toDouble() != 0.05);
    for (int i = 0; i < 2; ++i)
      for (auto it = straight[i + 2].begin(); it != straight[i + 2].end(); ++it)
        if (it.key() != "tokens_per_s" && it.key() != "checkpoint")
          QVERIFY2(resumed[i][it.key()] == it.value(), qPrintable(it.key()));
    QFile fb(d + "/b/model.safetensors"), fc(d + "/c/model.safetensors");
    QVERIFY(fb.open(QIODevice::ReadOnly) && fc.open(QIODevice::ReadOnly));
    QVERIFY(fb.readAll() == fc.readAll());

    // A reward model's scores (any real number) instead of exact match, and the direction of PPO: on a reward model
    // trained briefly on synthetic pairs, ten PPO steps raise the mean score well above the first rollout's
    // (seeded, on a fixed thread count, so the same every run; 2.65 at step 1, about 3.9 over steps 6-10 when
    // written; single 8-completion batches are noisy, hence the mean of the last five).
    const QString prefs = d + "/prefs.jsonl";
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "300", "--seed", "1", "--out", prefs}).code, 0);
    r = cli({"train", "--recipe", "reward", "--model", base + "/sft", "--data", prefs, "--out", d + "/rm", "--steps",
             "60", "--batch", "8", "--seq", "64", "--lr", "3e-3", "--threads", "2", "--val-every", "0",
             "--chat-template", "chatml"});
    QVERIFY2(r.code == 0, r.err.constData());
    QStringList scored_args = QStringList(common) << "--out" << d + "/scored" << "--steps" << "10" << "--val-every"
                                                  << "0" << "--reward-model" << d + "/rm" << "--kl-coef" << "0.01";
    scored_args[scored_args.indexOf("--batch") + 1] = "8";
    scored_args[scored_args.indexOf("--lr") + 1] = "1e-3";
    r = cli(scored_args);
    QVERIFY2(r.code == 0, r.err.constData());
    const QList<QJsonObject> scored = jsonLines(r.out);
    QCOMPARE(scored.size(), 10);
    const double score = scored[0]["samples"].toArray().at(0).toObject()["score"].toDouble();
    QVERIFY2(std::isfinite(score) && score != 0.0 && score != 1.0, qPrintable(QString::number(score)));
    double later = 0;
    for (int i = 5; i < 10; ++i) later += scored[i]["objective/scores"].toDouble() / 5;
    const double first = scored[0]["objective/scores"].toDouble();
    QVERIFY2(later > first + 0.4, qPrintable(QString("mean score %1 at step 1, %2 over steps 6-10").arg(first).arg(later)));

    // The same with LoRA, end to end (that the rollouts come from the adapted policy is test_ppo's
    // lora_policy_samples_with_its_adapters): the adapters start at zero, so step 1's policy is the reference; they
    // learn, so the policy leaves it; the adapter is saved beside the merged model.
    QStringList lora_args = scored_args;
    lora_args[lora_args.indexOf("--out") + 1] = d + "/lora";
    lora_args[lora_args.indexOf("--steps") + 1] = "4";
    lora_args[lora_args.indexOf("--lr") + 1] = "1e-2";
    r = cli(QStringList(lora_args) << "--lora-rank" << "8" << "--lora-alpha" << "16");
    QVERIFY2(r.code == 0, r.err.constData());
    const QList<QJsonObject> lora_lines = jsonLines(r.out);
    QCOMPARE(lora_lines.size(), 4);
    QCOMPARE(lora_lines[0]["objective/kl"].toDouble(), 0.0);
    for (const QJsonObject& line : lora_lines) QVERIFY(std::isfinite(line["loss"].toDouble()));
    QVERIFY2(std::fabs(lora_lines[3]["objective/kl"].toDouble()) > 1e-4,
             qPrintable(QString::number(lora_lines[3]["objective/kl"].toDouble())));
    QVERIFY(QFileInfo(d + "/lora/adapter/adapter_model.safetensors").size() > 0);
  }

  void data_synth_stories() {
    const QString out = m_dir.path() + "/synth.txt";
    const Run r = cli({"data", "synth", "--kind", "stories", "--n", "50", "--seed", "3", "--out", out});
    QVERIFY2(r.code == 0, r.err.constData());
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QCOMPARE(text.count("\n\n"), 49);
    QCOMPARE(cli({"data", "synth", "--kind", "stories", "--n", "50", "--seed", "3", "--out", out + "2"}).code, 0);
    QFile f2(out + "2");
    QVERIFY(f2.open(QIODevice::ReadOnly));
    QCOMPARE(f2.readAll(), text);
    QCOMPARE(cli({"data", "synth", "--kind", "poems", "--n", "5", "--out", out}).code, 2);
    QCOMPARE(cli({"data", "synth", "--kind", "stories", "--out", out}).code, 2);
    QCOMPARE(cli({"data", "frobnicate"}).code, 2);
    QCOMPARE(cli({"data", "synth", "--kind", "stories", "--n", "5", "--out", "/nonexistent-dir/x.txt"}).code, 1);
  }

  void data_synth_world_kinds_and_splits() {
    // Every kind of the world writes what it names, deterministically, and --split eval asks what the
    // training split never does.
    auto lines = [](const QString& path) {
      QFile f(path);
      return f.open(QIODevice::ReadOnly) ? f.readAll().split('\n') : QList<QByteArray>{};
    };
    for (const char* kind : {"world", "corpus", "facts", "arith", "chat", "prefs", "prompts"}) {
      const QString out = m_dir.path() + "/w-" + kind;
      QCOMPARE(cli({"data", "synth", "--kind", kind, "--n", "30", "--seed", "2", "--out", out}).code, 0);
      QCOMPARE(cli({"data", "synth", "--kind", kind, "--n", "30", "--seed", "2", "--out", out + "b"}).code, 0);
      QCOMPARE(lines(out), lines(out + "b"));
      if (QByteArray(kind) == "world" || QByteArray(kind) == "corpus") continue;
      const QList<QByteArray> rows = lines(out);
      QCOMPARE(rows.size(), 31);  // 30 lines and the empty rest after the last newline
      QVERIFY(QJsonDocument::fromJson(rows[0]).isObject());
    }
    const QString train = m_dir.path() + "/arith-train", eval = m_dir.path() + "/arith-eval";
    QCOMPARE(cli({"data", "synth", "--kind", "arith", "--n", "400", "--out", train}).code, 0);
    QCOMPARE(cli({"data", "synth", "--kind", "arith", "--n", "400", "--split", "eval", "--out", eval}).code, 0);
    QSet<QString> asked;
    for (const QByteArray& l : lines(train)) asked.insert(QJsonDocument::fromJson(l).object()["question"].toString());
    for (const QByteArray& l : lines(eval))
      if (!l.isEmpty()) QVERIFY(!asked.contains(QJsonDocument::fromJson(l).object()["question"].toString()));
    QCOMPARE(cli({"data", "synth", "--kind", "facts", "--n", "5", "--split", "test", "--out", eval}).code, 2);
    // --knowledge picks what held-out right-vs-wrong preference pairs ask; unseen: only those pairs, named so.
    const QString unseen = m_dir.path() + "/prefs-unseen";
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "20", "--split", "eval", "--knowledge", "unseen", "--out",
                  unseen})
                 .code,
             0);
    for (const QByteArray& l : lines(unseen))
      if (!l.isEmpty()) QCOMPARE(QJsonDocument::fromJson(l).object()["kind"].toString(), QString("correct_unseen"));
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "5", "--knowledge", "unseen", "--out", unseen}).code, 2);
    QCOMPARE(cli({"data", "synth", "--kind", "prefs", "--n", "5", "--split", "eval", "--knowledge", "some", "--out",
                  unseen})
                 .code,
             2);
  }

  // eval --task arith|facts|chat: the JSON result's shape, counts that add up, items from a file as
  // from memory, and a bad item line named by its number.
  void eval_tasks_json_contract() {
    const auto keysOf = [](const QJsonObject& object) {
      const QStringList keys = object.keys();
      return QSet<QString>(keys.begin(), keys.end());
    };
    const auto countsOf = [](const QJsonObject& c) {
      return std::make_pair(c["n"].toInt(), c["correct"].toInt());
    };
    const auto sumOf = [&](const QJsonObject& categories, const QStringList& prefixes) {
      int n = 0, correct = 0;
      for (auto it = categories.begin(); it != categories.end(); ++it)
        for (const QString& p : prefixes)
          if (it.key().startsWith(p)) {
            n += countsOf(it.value().toObject()).first;
            correct += countsOf(it.value().toObject()).second;
          }
      return std::make_pair(n, correct);
    };
    Run r = cli({"eval", "--model", m_model, "--task", "arith", "--n", "20", "--max-tokens", "8", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject o = json_of(r);
    QCOMPARE(keysOf(o),
             QSet<QString>({"task", "n", "correct", "accuracy", "categories", "examples", "model"}));
    QCOMPARE(o["task"].toString(), "arith");
    QCOMPARE(o["model"].toString(), m_model);
    QCOMPARE(o["n"].toInt(), 20);
    QCOMPARE(o["accuracy"].toDouble(), o["correct"].toInt() / 20.0);
    const QJsonObject categories = o["categories"].toObject();
    QVERIFY(!categories.isEmpty());
    for (auto it = categories.begin(); it != categories.end(); ++it) {
      QVERIFY2(QRegularExpression("^(add|sub|mul)_[0-9]d$").match(it.key()).hasMatch(), qPrintable(it.key()));
      const QJsonObject c = it.value().toObject();
      QCOMPARE(c["accuracy"].toDouble(), double(c["correct"].toInt()) / c["n"].toInt());
    }
    QCOMPARE(sumOf(categories, {""}), std::make_pair(20, o["correct"].toInt()));
    const QJsonArray examples = o["examples"].toArray();
    QCOMPARE(examples.size(), 5);
    for (const auto& e : examples)
      QCOMPARE(keysOf(e.toObject()),
               QSet<QString>({"prompt", "reply", "expected", "correct"}));

    r = cli({"eval", "--model", m_model, "--task", "facts", "--n", "10", "--max-tokens", "4", "--world-seed", "2", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    o = json_of(r);
    QCOMPARE(o["n"].toInt(), 10);
    QCOMPARE(sumOf(o["categories"].toObject(), {"seen", "unseen"}).first, 10);
    QCOMPARE(sumOf(o["categories"].toObject(), {"rel_"}).first, 10);

    const QString chat = m_dir.path() + "/eval-chat.jsonl";
    QCOMPARE(cli({"data", "synth", "--kind", "chat", "--n", "4", "--split", "eval", "--out", chat}).code, 0);
    r = cli({"eval", "--model", m_model, "--task", "chat", "--data", chat, "--max-tokens", "4", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    o = json_of(r);
    QCOMPARE(o["n"].toInt(), 4);
    QCOMPARE(keysOf(o["categories"].toObject()),
             QSet<QString>({"stops", "in_template"}));
    QCOMPARE(o["categories"].toObject()["stops"].toObject()["n"].toInt(), 4);

    r = cli({"eval", "--model", m_model, "--task", "arith", "--n", "6", "--max-tokens", "4"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.out.startsWith("arith on ") && r.out.contains("  all ") && r.out.contains(" / 6 "), r.out.constData());

    QFile bad(m_dir.path() + "/eval-bad.jsonl");
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("{\"question\":\"What is 1 + 1?\",\"answer\":\"2\",\"op\":\"+\",\"digits\":1}\n{\"question\":\"q\"}\n");
    bad.close();
    r = cli({"eval", "--model", m_model, "--task", "arith", "--data", bad.fileName()});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(r.err.contains("eval-bad.jsonl: line 2: no \"answer\" field"), r.err.constData());
  }

  void tokenizer_train_writes_a_loadable_vocabulary() {
    const QString text = m_dir.path() + "/tok-world.txt", chat = m_dir.path() + "/tok-chat.jsonl";
    const QString out = m_dir.path() + "/tok-out";
    QCOMPARE(cli({"data", "synth", "--kind", "world", "--n", "300", "--out", text}).code, 0);
    QCOMPARE(cli({"data", "synth", "--kind", "chat", "--n", "300", "--out", chat}).code, 0);
    const Run r = cli({"tokenizer", "train", "--data", text, "--data", chat, "--vocab-size", "400", "--out", out, "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject report = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(report["vocab_size"].toInt(), 400);
    QCOMPARE(report["new_tokens"].toInt(), 400 - 3 - 256);
    QVERIFY(report["tokens_per_byte"].toDouble() > 0.05 && report["tokens_per_byte"].toDouble() < 0.5);
    QVERIFY(QFileInfo::exists(out + "/tokenizer.json"));
    QVERIFY(!QFileInfo::exists(out + "/merges.txt"));  // the qwen2 split pattern has no vocab.json + merges.txt form
    // The trained directory is a tokenizer on its own: `tokenize` reads it (digits one by one: qwen2 split).
    const Run t = cli({"tokenize", "--model", out, "--text", "Mia has 12 kites.", "--json"});
    QCOMPARE(t.code, 0);
    const QJsonArray pieces = QJsonDocument::fromJson(t.out).object()["pieces"].toArray();
    QVERIFY(pieces.contains(QJsonValue(QStringLiteral("1"))) && pieces.contains(QJsonValue(QStringLiteral("2"))));
    // With the ChatML special tokens (the default) it names the ChatML template, so a model made from it
    // with `init --tokenizer` chats in ChatML; --vocab tokenizer sizes that model's vocabulary to it.
    QCOMPARE(report["chat_template"].toString(), QStringLiteral("chatml"));
    QVERIFY(QFileInfo::exists(out + "/tokenizer_config.json"));
    const QString model = m_dir.path() + "/tok-model";
    const Run init = cli({"init", "--preset", "tiny", "--arch", "llama", "--layers", "1", "--width", "32", "--heads",
                          "2", "--vocab", "tokenizer", "--tokenizer", out, "--out", model});
    QVERIFY2(init.code == 0, init.err.constData());
    QFile cfg_file(model + "/config.json");
    QVERIFY(cfg_file.open(QIODevice::ReadOnly));
    const QJsonObject cfg = QJsonDocument::fromJson(cfg_file.readAll()).object();
    QCOMPARE(cfg["model_type"].toString(), QStringLiteral("llama"));
    QCOMPARE(cfg["vocab_size"].toInt(), 400);
    QCOMPARE(cfg["num_hidden_layers"].toInt(), 1);
    QCOMPARE(cfg["hidden_size"].toInt(), 32);
    QCOMPARE(cfg["num_key_value_heads"].toInt(), 2);
    QVERIFY(cfg["tie_word_embeddings"].toBool());
    const Run chat_run = cli({"generate", "--model", model, "--chat", "--prompt", "Hi", "--max-tokens", "2", "--json"});
    QVERIFY2(chat_run.code == 0, chat_run.err.constData());
    QCOMPARE(QJsonDocument::fromJson(chat_run.out).object()["chat_template"].toString(), QStringLiteral("chatml"));
    const QString plain = m_dir.path() + "/tok-plain";
    QCOMPARE(cli({"tokenizer", "train", "--data", text, "--vocab-size", "300", "--out", plain, "--chat-template", "none"}).code, 0);
    QVERIFY(!QFileInfo::exists(plain + "/tokenizer_config.json"));
    QCOMPARE(cli({"tokenizer", "train", "--data", text, "--vocab-size", "300", "--out", plain, "--special", "<|endoftext|>",
                  "--chat-template", "chatml"}).code, 2);
    QCOMPARE(cli({"init", "--preset", "tiny", "--vocab", "tokenizer", "--out", model + "2"}).code, 2);
    QCOMPARE(cli({"init", "--preset", "tiny", "--width", "30", "--heads", "4", "--out", model + "2"}).code, 2);
    QCOMPARE(cli({"init", "--preset", "tiny", "--arch", "mamba", "--out", model + "2"}).code, 2);
    QCOMPARE(cli({"tokenizer", "train", "--data", text, "--vocab-size", "100", "--out", out}).code, 2);
    QCOMPARE(cli({"tokenizer", "train", "--data", m_dir.path() + "/missing.txt", "--out", out}).code, 1);
    QCOMPARE(cli({"tokenizer", "train", "--data", text, "--pre", "bert", "--out", out}).code, 1);
    QCOMPARE(cli({"tokenizer", "frobnicate"}).code, 2);
  }

  void train_from_a_config_starts_at_random_weights() {
    // A config.json alone (here the starter's, with its tokenizer beside it) starts from random weights:
    // the first loss is near ln(V) = 10.8 for the 50257-token vocabulary, as for any untrained model.
    const QString dir = m_dir.path() + "/config-only", out = m_dir.path() + "/from-config";
    QVERIFY(QDir().mkpath(dir));
    for (const char* f : {"config.json", "vocab.json", "merges.txt"})
      QVERIFY(QFile::copy(m_model + "/" + f, dir + "/" + f));
    const Run r = cli({"train", "--recipe", "pretrain", "--model", dir + "/config.json", "--data", writeStories(),
                       "--out", out, "--steps", "2", "--batch", "2", "--seq", "16", "--val-every", "0", "--seed", "4"});
    QVERIFY2(r.code == 0, r.err.constData());
    const double first = jsonLines(r.out)[0]["loss"].toDouble();
    QVERIFY2(std::abs(first - std::log(50257.0)) < 0.5, qPrintable(QString::number(first)));
    QVERIFY(QFileInfo::exists(out + "/model.safetensors") && QFileInfo::exists(out + "/vocab.json"));
    const Run bad = cli({"train", "--recipe", "pretrain", "--model", dir + "/vocab.json", "--data", writeStories(),
                         "--out", out + "2", "--steps", "1"});
    QCOMPARE(bad.code, 1);
  }

  void train_ctrl_c_saves_a_resumable_checkpoint() {
    const QString out = m_dir.path() + "/interrupted";
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            {"train", "--recipe", "pretrain", "--model", m_model, "--data", writeStories(), "--out", out, "--steps",
             "1000", "--batch", "2", "--seq", "16", "--val-every", "0"});
    QVERIFY(p.waitForStarted());
    QVERIFY(p.waitForReadyRead(120000));  // the first step is done
    ::kill(pid_t(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 130);
    const QList<QJsonObject> lines = jsonLines(p.readAllStandardOutput());
    QVERIFY(!lines.isEmpty() && lines.size() < 1000);
    const int last = lines.last()["step"].toInt();
    QVERIFY(QFileInfo::exists(out + QString("/checkpoints/ckpt_%1.safetensors").arg(last, 8, 10, QChar('0'))));
    QVERIFY(QFileInfo::exists(out + "/model.safetensors"));
    QVERIFY(p.readAllStandardError().contains("continue with --resume"));
  }

  void train_bad_input_data() {
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QByteArray>("dataContent");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("needle");
    QTest::newRow("no recipe") << QStringList{"--recipe", ""} << QByteArray("x") << 2 << "unknown --recipe";
    QTest::newRow("ppo flag without ppo") << QStringList{"--recipe", "grpo", "--kl-coef", "0.1"} << QByteArray("x")
                                          << 2 << "--kl-coef applies to --recipe ppo only";
    QTest::newRow("ppo grad accum") << QStringList{"--recipe", "ppo", "--grad-accum", "2"} << QByteArray("x") << 2
                                    << "--grad-accum applies to the other recipes";
    QTest::newRow("ppo minibatches") << QStringList{"--recipe", "ppo", "--batch", "3", "--num-minibatches", "2"}
                                     << QByteArray("x") << 2 << "--num-minibatches 2 does not divide --batch 3";
    QTest::newRow("ppo no epochs") << QStringList{"--recipe", "ppo", "--ppo-epochs", "0"} << QByteArray("x") << 2
                                   << "--ppo-epochs";
    QTest::newRow("ppo kl estimator") << QStringList{"--recipe", "ppo", "--kl-estimator", "k2"} << QByteArray("x")
                                      << 2 << "--kl-estimator must be k1 or k3";
    QTest::newRow("ppo negative kl") << QStringList{"--recipe", "ppo", "--kl-coef", "-1"} << QByteArray("x") << 2
                                     << "--kl-coef";
    QTest::newRow("ppo horizon alone") << QStringList{"--recipe", "ppo", "--kl-horizon", "100"} << QByteArray("x")
                                       << 2 << "--kl-horizon needs --target-kl";
    QTest::newRow("ppo gae lambda") << QStringList{"--recipe", "ppo", "--gae-lambda", "1.5"} << QByteArray("x") << 2
                                    << "--gae-lambda";
    QTest::newRow("ppo not a reward model") << QStringList{"--recipe", "ppo", "--reward-model", m_model}
                                            << QByteArray("x") << 2 << "is not a reward model";
    QTest::newRow("ppo seq too short") << QStringList{"--recipe", "ppo", "--seq", "16"} << QByteArray("x") << 1
                                       << "must exceed max new tokens";
    QTest::newRow("beta without dpo") << QStringList{"--recipe", "reward", "--beta", "0.2"} << QByteArray("x") << 2
                                      << "--beta applies to --recipe dpo and grpo only";
    QTest::newRow("group size without grpo") << QStringList{"--recipe", "dpo", "--group-size", "8"} << QByteArray("x")
                                             << 2 << "--group-size applies to --recipe grpo only";
    QTest::newRow("grpo group of one") << QStringList{"--recipe", "grpo", "--group-size", "1"} << QByteArray("x") << 2
                                       << "--group-size";
    QTest::newRow("grpo prompt of unknown kind") << QStringList{"--recipe", "grpo", "--seq", "64"}
                                                 << QByteArray(
                                                        "{\"prompt\":\"Q?\",\"answer\":\"1\",\"kind\":\"arith\"}\n"
                                                        "{\"prompt\":\"Q?\",\"answer\":\"1\",\"kind\":\"poem\"}\n")
                                                 << 1 << "line 2: \"kind\" must be \"arith\" or \"facts\"";
    QTest::newRow("grpo seq too short") << QStringList{"--recipe", "grpo", "--seq", "16"} << QByteArray("x") << 1
                                        << "must exceed max new tokens";
    QTest::newRow("bad beta") << QStringList{"--recipe", "dpo", "--beta", "-1"} << QByteArray("x") << 2 << "--beta";
    QTest::newRow("prefs row without rejected")
        << QStringList{"--recipe", "reward"}
        << QByteArray(
               "{\"prompt\":\"Q?\",\"chosen\":\"A.\",\"rejected\":\"B.\"}\n{\"prompt\":\"Q?\",\"chosen\":\"A.\"}\n")
        << 1 << "line 2: the row has no \"rejected\" field";
    QTest::newRow("prefs bad json") << QStringList{"--recipe", "dpo"} << QByteArray("{\"prompt\": [}") << 1
                                    << "line 1: bad JSON";
    QTest::newRow("prefs same replies") << QStringList{"--recipe", "dpo"}
                                        << QByteArray(R"({"prompt":"Q","chosen":"A","rejected":"A"})") << 1
                                        << "line 1: \"chosen\" and \"rejected\" are the same reply";
    QTest::newRow("bad lr") << QStringList{"--lr", "fast"} << QByteArray("x") << 2 << "must be a number";
    QTest::newRow("negative steps") << QStringList{"--steps", "-3"} << QByteArray("x") << 2 << "must be";
    QTest::newRow("bad schedule") << QStringList{"--schedule", "wavy"} << QByteArray("x") << 2 << "unknown --schedule";
    QTest::newRow("bad shuffle") << QStringList{"--shuffle", "maybe"} << QByteArray("x") << 2
                                 << "--shuffle must be on or off";
    QTest::newRow("seq over context") << QStringList{"--seq", "100000"} << QByteArray("x") << 2
                                      << "exceeds the model's context";
    QTest::newRow("empty data") << QStringList{} << QByteArray() << 1 << "the data file is empty";
    QTest::newRow("too little data") << QStringList{"--val-every", "0"} << QByteArray("hello") << 1
                                     << "cannot fill one batch";
    QTest::newRow("latin-1 data") << QStringList{} << QByteArray("caf\xE9 au lait") << 1
                                  << "line 1, byte 4: invalid UTF-8";
    QTest::newRow("bad sft row") << QStringList{"--recipe", "sft"} << QByteArray("{\"messages\": [}") << 1
                                 << "line 1: bad JSON";
    QTest::newRow("sft no assistant") << QStringList{"--recipe", "sft"}
                                      << QByteArray(R"({"messages":[{"role":"user","content":"hi"}]})") << 1
                                      << "no assistant message";
  }
  void train_bad_input() {
    QFETCH(QStringList, extra);
    QFETCH(QByteArray, dataContent);
    QFETCH(int, code);
    QFETCH(QString, needle);
    const QString data = m_dir.path() + "/bad-data.txt";
    QFile f(data);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(dataContent);
    f.close();
    QStringList args = {"train",   "--recipe", "pretrain",
                        "--model", m_model,    "--data",
                        data,      "--out",    m_dir.path() + "/bad-out",
                        "--steps", "2",        "--batch",
                        "2",       "--seq",    "16"};
    for (int i = 0; i + 1 < extra.size(); i += 2) {
      const int at = args.indexOf(extra[i]);
      if (at >= 0) args[at + 1] = extra[i + 1];
      else args << extra[i] << extra[i + 1];
    }
    const Run r = cli(args);
    QCOMPARE(r.code, code);
    QVERIFY2(QString::fromUtf8(r.err).contains(needle), r.err.constData());
    QCOMPARE(r.err.count('\n'), 1);  // one line
    QVERIFY(!QFileInfo::exists(m_dir.path() + "/bad-out/model.safetensors"));
    const Run missing = cli({"train", "--recipe", "pretrain", "--model", m_model, "--data", "/nonexistent.txt", "--out",
                             m_dir.path() + "/bad-out"});
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.err.contains("cannot open the data file"));
  }

  void chat_wraps_the_prompt_in_the_template() {
    // The starter model has no chat template: Plain "role: text" lines, the assistant's turn opened.
    const auto ids_of = [&](const QString& text) {
      return json_of(cli({"tokenize", "--model", m_model, "--text", text, "--json"}))["ids"].toArray();
    };
    const Run plain = cli({"generate", "--model", m_model, "--prompt", "Hello there", "--chat", "--system", "Be brief.",
                           "--max-tokens", "2", "--seed", "1", "--json"});
    QVERIFY2(plain.code == 0, plain.err.constData());
    const QJsonObject p = json_of(plain);
    QCOMPARE(p["chat_template"].toString(), QStringLiteral("plain"));
    QCOMPARE(p["prompt_tokens"].toArray(), ids_of("System: Be brief.\nUser: Hello there\nAssistant:"));

    // --template overrides; with GPT-2's vocabulary ChatML's markup is plain text, and the user's
    // "<|endoftext|>" stays text too (it would be id 50256 only with --special, which --chat refuses).
    const Run chatml = cli({"generate", "--model", m_model, "--prompt", "Hi <|endoftext|>", "--chat", "--template",
                            "chatml", "--max-tokens", "1", "--seed", "1", "--json"});
    QVERIFY2(chatml.code == 0, chatml.err.constData());
    const QJsonObject c = json_of(chatml);
    QCOMPARE(c["chat_template"].toString(), QStringLiteral("chatml"));
    const QJsonArray ids = c["prompt_tokens"].toArray();
    QCOMPARE(ids, ids_of("<|im_start|>user\nHi <|endoftext|><|im_end|>\n<|im_start|>assistant\n"));
    QVERIFY(!ids.contains(50256));
  }

  void attention_json_contract() {
    const QString prompt = "The cat sat on the mat";
    const Run r = cli({"attention", "--model", m_model, "--prompt", prompt, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject o = json_of(r);
    const QJsonArray ids = o["ids"].toArray();
    const int T = ids.size(), L = o["n_layer"].toInt(), NH = o["n_head"].toInt();
    QCOMPARE(T, 6);
    QCOMPARE(o["tokens"].toArray().size(), T);
    QCOMPARE(o["tokens"].toArray()[1].toString(), QString(" cat"));
    const QJsonArray att = o["attention"].toArray();
    QCOMPARE(att.size(), L);
    QVERIFY(L >= 1 && NH >= 1);
    for (const auto& layer : att) {
      QCOMPARE(layer.toArray().size(), NH);
      for (const auto& head : layer.toArray()) {
        QCOMPARE(head.toArray().size(), T);
        for (int q = 0; q < T; ++q) {
          const QJsonArray row = head.toArray()[q].toArray();
          QCOMPARE(row.size(), T);
          double sum = 0;
          for (int k = 0; k < T; ++k) {
            if (k > q) QCOMPARE(row[k].toDouble(), 0.0);
            sum += row[k].toDouble();
          }
          QVERIFY(std::abs(sum - 1.0) < 1e-5);
        }
      }
    }
    // One layer and head: just that (query x key) matrix.
    const Run one = cli({"attention", "--model", m_model, "--prompt", prompt, "--layer", QString::number(L - 1),
                         "--head", "1", "--json"});
    QVERIFY2(one.code == 0, one.err.constData());
    QCOMPARE(json_of(one)["attention"].toArray(), att[L - 1].toArray()[1].toArray());
    // The mean over heads.
    const Run mean =
        cli({"attention", "--model", m_model, "--prompt", prompt, "--layer", "0", "--head", "mean", "--json"});
    QVERIFY2(mean.code == 0, mean.err.constData());
    const double got = json_of(mean)["attention"].toArray()[T - 1].toArray()[2].toDouble();
    double want = 0;
    for (int h = 0; h < NH; ++h) want += att[0].toArray()[h].toArray()[T - 1].toArray()[2].toDouble() / NH;
    QVERIFY(std::abs(got - want) < 1e-6);
  }

  void attention_png() {
    QTemporaryDir d;
    const QString png = d.path() + "/att.png";
    const Run r =
        cli({"attention", "--model", m_model, "--prompt", "a b c d", "--layer", "0", "--head", "0", "--png", png});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.out.contains("wrote"));
    const QImage img(png);
    QVERIFY(!img.isNull());
    // 4 tokens: 8 px cells (at most 8) and a 4 px border. Query 0 attends only to itself: weight 1
    // is the top of the viridis scale (#fde725), the zeros above the diagonal its bottom (#440154).
    QCOMPARE(img.size(), QSize(4 + 32 + 4, 4 + 32 + 4));
    QCOMPARE(img.pixel(4 + 4, 4 + 4) & 0xFFFFFF, 0xfde725u);
    QCOMPARE(img.pixel(4 + 3 * 8 + 4, 4 + 4) & 0xFFFFFF, 0x440154u);
    // Without --layer/--head: every layer (down) x head (across).
    const Run all = cli({"attention", "--model", m_model, "--prompt", "a b c d", "--png", png, "--json"});
    QVERIFY2(all.code == 0, all.err.constData());
    const QJsonObject o = json_of(all);
    const int L = o["n_layer"].toInt(), NH = o["n_head"].toInt();
    QCOMPARE(QImage(png).size(), QSize(NH * 32 + (NH + 1) * 4, L * 32 + (L + 1) * 4));
  }

  void lens_json_contract() {
    const QString prompt = "Once upon a time there";
    const Run r = cli({"lens", "--model", m_model, "--prompt", prompt, "--top-k", "3", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject o = json_of(r);
    const int T = o["ids"].toArray().size();
    const QJsonArray layers = o["layers"].toArray(), lens = o["lens"].toArray();
    QCOMPARE(layers.first().toString(), QString("embed"));
    QCOMPARE(lens.size(), layers.size());
    for (const auto& row : lens) {
      QCOMPARE(row.toArray().size(), T);
      for (const auto& pos : row.toArray()) {
        const QJsonArray top = pos.toArray();
        QCOMPARE(top.size(), 3);
        double sum = 0;
        for (int j = 0; j < 3; ++j) {
          const double p = top[j].toObject()["prob"].toDouble();
          QVERIFY(p >= 0 && p <= 1);
          if (j > 0) QVERIFY(p <= top[j - 1].toObject()["prob"].toDouble());
          sum += p;
        }
        QVERIFY(sum <= 1.0 + 1e-6);
      }
    }
    // The last layer is the model's real next-token distribution: generate's top logprobs (a separate
    // code path: prefill through the KV cache) must name the same tokens with the same probabilities.
    const Run g = cli({"generate", "--model", m_model, "--prompt", prompt, "--max-tokens", "1", "--temperature", "0",
                       "--top-logprobs", "3", "--ignore-eos", "--json"});
    QVERIFY2(g.code == 0, g.err.constData());
    const QJsonArray want = json_of(g)["tokens"].toArray()[0].toObject()["top_logprobs"].toArray();
    const QJsonArray got = lens.last().toArray()[T - 1].toArray();
    for (int j = 0; j < 3; ++j) {
      QCOMPARE(got[j].toObject()["id"].toInt(), want[j].toObject()["id"].toInt());
      QVERIFY(std::abs(got[j].toObject()["prob"].toDouble() - std::exp(want[j].toObject()["logprob"].toDouble())) <
              1e-5);
    }
    QCOMPARE(o["token_logprob"].toArray().size(), T);
  }

  void inspect_commands_reject_bad_flags_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("needle");
    QTest::newRow("layer out of range") << QStringList{"attention", "--prompt", "a b", "--layer", "99"} << 2
                                        << "must be in";
    QTest::newRow("head not a number") << QStringList{"attention", "--prompt", "a b", "--head", "avg"} << 2 << "--head";
    QTest::newRow("negative layer") << QStringList{"attention", "--prompt", "a b", "--layer", "-1"} << 2
                                    << "must be in";
    QTest::newRow("no prompt") << QStringList{"lens"} << 2 << "missing required flag --prompt";
    QTest::newRow("top-k zero") << QStringList{"lens", "--prompt", "a", "--top-k", "0"} << 2 << "must be in";
    QTest::newRow("png unwritable") << QStringList{"attention", "--prompt", "a", "--png", "/nonexistent/dir/x.png"} << 1
                                    << "x.png";
  }
  void inspect_commands_reject_bad_flags() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, needle);
    args << "--model" << m_model;
    const Run r = cli(args);
    QCOMPARE(r.code, code);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(QString::fromUtf8(r.err).contains(needle), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
