// llm-workbench-cli end to end, as a user runs it: the DESIGN.md §5 JSON contract, determinism, and
// one clear stderr line + non-zero exit for every kind of bad input.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

namespace {

struct Run {
  int code;
  QByteArray out, err;
};

Run cli(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(WB_CLI_PATH), args);
  if (!p.waitForFinished(300000)) {
    p.kill();
    return {-1, {}, "timeout"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput(), p.readAllStandardError()};
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

  void generate_json_contract() {
    const Run r = cli({"generate", "--model", m_model, "--prompt", "Once upon a time", "--max-tokens", "8", "--seed", "3",
                       "--top-logprobs", "3", "--ignore-eos", "--json"});
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
      for (int i = 1; i < 3; ++i) QVERIFY(top[i - 1].toObject()["logprob"].toDouble() >= top[i].toObject()["logprob"].toDouble());
      joined += t["text"].toString();
    }
    QCOMPARE(o["text"].toString(), joined);
    const QJsonObject st = o["stats"].toObject();
    for (const char* k : {"prompt_tokens", "generated_tokens", "prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms"})
      QVERIFY2(st.contains(k), k);
    QCOMPARE(st["generated_tokens"].toInt(), 8);
  }

  void same_seed_same_text() {
    const QStringList args = {"generate", "--model", m_model, "--prompt", "The", "--max-tokens", "12", "--seed", "11",
                              "--temperature", "1.0", "--ignore-eos", "--json"};
    const QString a = json_of(cli(args))["text"].toString();
    QCOMPARE(json_of(cli(args))["text"].toString(), a);
    QStringList other = args;
    other[other.indexOf("11")] = "12";
    QVERIFY(json_of(cli(other))["text"].toString() != a);
  }

  void bench_json() {
    const Run r = cli({"bench", "--model", m_model, "--prompt-tokens", "16", "--gen-tokens", "4", "--repetitions", "1", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject o = json_of(r);
    QVERIFY(o["prefill_tokens_per_s"].toDouble() > 0);
    QVERIFY(o["decode_tokens_per_s"].toDouble() > 0);
    QVERIFY(o["peak_rss_mb"].toDouble() > 1);
    QVERIFY(o["backend"].toString().startsWith("CPU"));
    QCOMPARE(o["weights"].toString(), QString("f32"));
    // A q8_0 GGUF reports its weights as such (they are used in place, not widened).
    const Run q = cli({"bench", "--model", QString(WB_SOURCE_DIR) + "/tests/data/gguf/tiny-qwen2-q8_0.gguf", "--prompt-tokens",
                       "8", "--gen-tokens", "2", "--repetitions", "1", "--json"});
    QVERIFY2(q.code == 0, q.err.constData());
    QCOMPARE(json_of(q)["weights"].toString(), QString("q8_0"));
  }

  void bad_input_gives_one_clear_line_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("needle");
    QTest::newRow("no command") << QStringList{} << "usage";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
    QTest::newRow("unknown flag") << QStringList{"generate", "--modle", "x"} << "unknown flag --modle";
    QTest::newRow("missing value") << QStringList{"generate", "--model"} << "needs a value";
    QTest::newRow("missing model flag") << QStringList{"generate", "--prompt", "hi"} << "missing required flag --model";
    QTest::newRow("missing model file") << QStringList{"generate", "--model", "/nonexistent", "--prompt", "hi"} << "no such file";
    QTest::newRow("bad number") << QStringList{"generate", "--model", "x", "--prompt", "y", "--temperature", "hot"} << "must be a number";
    QTest::newRow("out of range") << QStringList{"generate", "--model", "x", "--prompt", "y", "--top-p", "2"} << "must be in";
    QTest::newRow("bad bias") << QStringList{"generate", "--model", "x", "--prompt", "y", "--logit-bias", "abc"} << "ID=BIAS";
    QTest::newRow("bench missing model") << QStringList{"bench", "--model", "/nonexistent"} << "no such file";
    QTest::newRow("system without chat") << QStringList{"generate", "--model", "x", "--prompt", "y", "--system", "s"} << "need --chat";
    QTest::newRow("unknown template") << QStringList{"generate", "--model", "x", "--prompt", "y", "--chat", "--template", "jinja"} << "--template must be";
    QTest::newRow("special with chat") << QStringList{"generate", "--model", "x", "--prompt", "y", "--chat", "--special"} << "--special cannot";
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
    const QString gguf = m_dir.path() + "/starter.gguf", hf = m_dir.path() + "/starter-back", q8 = m_dir.path() + "/starter-q8.gguf";
    Run r = cli({"convert", "--in", m_model, "--out", gguf});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.err.contains("wrote") && r.err.contains("%]"));  // progress on stderr
    r = cli({"convert", "--in", gguf, "--out", hf + "/"});  // a trailing slash names the same directory
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(QFile::exists(hf + "/vocab.json") && QFile::exists(hf + "/merges.txt") && QFile::exists(hf + "/config.json"));
    const QStringList gen = {"--prompt", "Once upon a time", "--max-tokens", "6", "--temperature", "0", "--ignore-eos", "--json"};
    const QJsonObject a = json_of(cli(QStringList{"generate", "--model", m_model} + gen)), b = json_of(cli(QStringList{"generate", "--model", gguf} + gen)),
                      c = json_of(cli(QStringList{"generate", "--model", hf} + gen));
    QVERIFY(!a["text"].toString().isEmpty());
    QCOMPARE(b["text"].toString(), a["text"].toString());
    QCOMPARE(c["text"].toString(), a["text"].toString());
    QCOMPARE(b["prompt_tokens"].toArray(), a["prompt_tokens"].toArray());
    // quantize: a smaller file whose predictions stay close to the f32 reference.
    r = cli({"quantize", "--in", m_model, "--out", q8, "--type", "q8_0"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(QFileInfo(q8).size() < QFileInfo(gguf).size() / 3);
    r = cli({"eval", "--model", q8, "--task", "perplexity", "--data", QStringLiteral(WB_SOURCE_DIR) + "/tests/data/eval/heldout_prose.txt",
             "--ctx", "128", "--max-tokens", "300", "--reference", gguf, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject e = json_of(r);
    QCOMPARE(e["task"].toString(), QStringLiteral("perplexity"));
    QCOMPARE(e["n"].toInt(), 300 - 3);  // windows of 128, 128, 44 tokens: one unscored token each
    QVERIFY(e["perplexity"].toDouble() > 1.0);
    QVERIFY(e["kl_vs_reference"].toDouble() > 0.0 && e["kl_vs_reference"].toDouble() < 0.05);
    QVERIFY(e["top1_agreement"].toDouble() > 0.5 && e["top1_agreement"].toDouble() <= 1.0);
    // Against itself: no divergence.
    r = cli({"eval", "--model", gguf, "--task", "perplexity", "--data", QStringLiteral(WB_SOURCE_DIR) + "/tests/data/eval/heldout_prose.txt",
             "--ctx", "64", "--max-tokens", "100", "--reference", m_model, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(json_of(r)["kl_vs_reference"].toDouble(), 0.0);
    QCOMPARE(json_of(r)["top1_agreement"].toDouble(), 1.0);
  }

  void convert_errors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("needle");
    const QString out = "/nonexistent-dir-wb/x.gguf";
    QTest::newRow("missing input") << QStringList{"convert", "--in", "/nonexistent-model", "--out", "/tmp/wb-x.gguf"} << 1 << "no such file";
    QTest::newRow("bad dtype") << QStringList{"convert", "--in", "x", "--out", "y.gguf", "--dtype", "q5"} << 2 << "--dtype must be one of";
    QTest::newRow("bad target") << QStringList{"convert", "--in", "x", "--out", "y", "--to", "onnx"} << 2 << "--to must be gguf or hf";
    QTest::newRow("dtype for hf") << QStringList{"convert", "--in", "x", "--out", "y", "--dtype", "q8_0"} << 2 << "GGUF output only";
    QTest::newRow("quantize float type") << QStringList{"quantize", "--in", "x", "--out", "y.gguf", "--type", "f16"} << 2 << "--type must be one of";
    QTest::newRow("quantize missing type") << QStringList{"quantize", "--in", "x", "--out", "y.gguf"} << 2 << "missing required flag --type";
    QTest::newRow("eval bad task") << QStringList{"eval", "--model", "x", "--task", "mmlu", "--data", "y"} << 2 << "not available";
    QTest::newRow("eval missing data") << QStringList{"eval", "--model", "x", "--task", "perplexity", "--data", "/nonexistent-data.txt"} << 1 << "cannot open";
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
    for (const char* flag : {"--model", "--prompt", "--temperature", "--top-k", "--top-p", "--min-p", "--seed", "--stop", "--json"})
      QVERIFY2(r.out.contains(flag), flag);
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
    const QStringList base = {"generate", "--model", m_model, "--prompt", "A", "--max-tokens", "20", "--temperature", "0",
                              "--ignore-eos", "--json"};
    const QString free_text = json_of(cli(base))["text"].toString();
    QVERIFY(free_text.size() > 4);
    const QString stop = free_text.mid(free_text.size() / 2, 2);
    QStringList with_stop = base;
    with_stop << "--stop" << stop;
    const QJsonObject o = json_of(cli(with_stop));
    QCOMPARE(o["finish_reason"].toString(), QStringLiteral("stop"));
    QCOMPARE(o["text"].toString(), free_text.left(free_text.indexOf(stop)));
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
    QCOMPARE(p["prompt_tokens"].toArray(), ids_of("system: Be brief.\nuser: Hello there\nassistant:"));

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
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
