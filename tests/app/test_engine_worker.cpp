// EngineWorker on its own thread, as the app runs it: loading reports progress and the model's
// facts; missing and corrupt files fail with a readable message and leave the previous model in
// place; cancel works mid-load and before the load starts, without leaking into the next load;
// generation streams text and stops on request.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <memory>

#include <cmath>
#include <limits>

#include "engine/backend.h"
#include "engine/generator.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "services/engineworker.h"
#include "services/logitbias.h"
#include "support/tiny_tokenizer.h"

namespace {

engine::ModelConfig tinyConfig() {
  engine::ModelConfig c;
  c.arch = engine::Arch::GPT2;
  c.n_layer = 2;
  c.n_embd = 32;
  c.n_head = 2;
  c.n_kv_head = 2;
  c.vocab_size = 512;
  c.max_seq_len = 64;
  c.ffn_dim = 128;
  return c;
}

void writeTinyModel(const QString& dir, bool withTokenizer) {
  engine::Model model(tinyConfig());
  model.init_random(7);
  QString tokenizerDir;
  if (withTokenizer) {
    tokenizerDir = dir + QStringLiteral("-tokenizer");
    QVERIFY(QDir().mkpath(tokenizerDir));
    writeTinyTokenizer(tokenizerDir);
  }
  engine::save_hf_directory(model, dir.toStdString(), tokenizerDir.toStdString(), "{\"test\":true}");
}

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(f.write(bytes), bytes.size());
}

}  // namespace

class TestEngineWorker : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void init();
  void cleanup();

  void loadEmitsProgressAndModelLoaded();
  void missingPathFails();
  void corruptFileFails_data();
  void corruptFileFails();
  void failedLoadKeepsPreviousModel();
  void cancelDuringLoad();
  void cancelBeforeStartDoesNotLeak();
  void generateWithoutModelFails();
  void generateStreamsRecords();
  void stopEndsGeneration();
  void logitBiasForcesToken();
  void logitBiasErrorsNameTheLine();
  void logitBiasParserForms();
  void stopStringEndsGeneration();
  void penaltiesAndWindowReachTheEngine();
  void seedReproducesSampling();
  void topLogprobsSortedAndBounded();
  void forcedAlternativeContinuesFromIt();
  void promptTokenizationRoundTrips();
  void tokenRecordsAreBatched();
  void recordsHoldBackPartialCharacters();

 private:
  void load(const QString& path, quint64 ticket = 0);
  ModelInfo loadOk(const QString& path);
  struct Run {
    QList<TokenRecord> tokens;
    QString text;  // the records' text, joined
    GenerationStats stats;
    QString error;
    int batches = 0;
  };
  // Runs one generation (a continuation when `forced` is not empty) and gathers what it emitted.
  Run runGeneration(const GenerationSettings& s, const QString& prompt = QStringLiteral("abc def"),
                    const QList<int>& forced = {});

  QTemporaryDir m_dir;
  QString m_model;          // tiny model without tokenizer
  QString m_modelWithText;  // tiny model with tokenizer
  std::unique_ptr<QThread> m_thread;
  EngineWorker* m_worker = nullptr;
};

// The worker emits from its own thread and QSignalSpy records the emission at once, so a fast signal
// can arrive before wait() is entered, and wait() only waits for a new one: check the count first.
static bool waitForSignal(QSignalSpy& spy, int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (spy.count() == 0 && timer.elapsed() < timeoutMs) spy.wait(50);
  return spy.count() > 0;
}

void TestEngineWorker::initTestCase() {
  QStandardPaths::setTestModeEnabled(true);
  QVERIFY(m_dir.isValid());
  m_model = m_dir.filePath(QStringLiteral("tiny"));
  m_modelWithText = m_dir.filePath(QStringLiteral("tiny-text"));
  writeTinyModel(m_model, false);
  writeTinyModel(m_modelWithText, true);
  QVERIFY(QFile::exists(m_model + QStringLiteral("/model.safetensors")));
  QVERIFY(QFile::exists(m_modelWithText + QStringLiteral("/vocab.json")));
}

void TestEngineWorker::init() {
  m_thread = std::make_unique<QThread>();
  m_worker = new EngineWorker;
  m_worker->moveToThread(m_thread.get());
  connect(m_thread.get(), &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread->start();
}

void TestEngineWorker::cleanup() {
  m_worker->requestStopGeneration();
  m_worker->requestCancelLoad();
  m_thread->quit();
  QVERIFY(m_thread->wait(10000));
  m_thread.reset();
  m_worker = nullptr;
}

void TestEngineWorker::load(const QString& path, quint64 ticket) {
  QMetaObject::invokeMethod(m_worker, "loadModel", Qt::QueuedConnection, Q_ARG(QString, path), Q_ARG(int, 1),
                            Q_ARG(quint64, ticket));
}

ModelInfo TestEngineWorker::loadOk(const QString& path) {
  QSignalSpy loaded(m_worker, &EngineWorker::modelLoaded);
  QSignalSpy failed(m_worker, &EngineWorker::loadFailed);
  load(path);
  if (!waitForSignal(loaded, 20000)) {
    qWarning() << "load failed:" << failed;
    return {};
  }
  return loaded.at(0).at(0).value<ModelInfo>();
}

void TestEngineWorker::loadEmitsProgressAndModelLoaded() {
  QSignalSpy backend(m_worker, &EngineWorker::backendChanged);
  QSignalSpy progress(m_worker, &EngineWorker::loadProgress);
  QSignalSpy started(m_worker, &EngineWorker::loadStarted);
  const ModelInfo info = loadOk(m_model);
  QVERIFY(info.isValid());

  QCOMPARE(started.count(), 1);
  QVERIFY2(progress.count() >= 3, qPrintable(QString::number(progress.count())));
  double last = -1;
  for (const QList<QVariant>& args : progress) {
    const double f = args.at(0).toDouble();
    QVERIFY(f >= last);  // progress never goes backwards
    QVERIFY(!args.at(1).toString().isEmpty());
    last = f;
  }
  QCOMPARE(last, 1.0);

  QCOMPARE(backend.count(), 1);
  QVERIFY(!backend.at(0).at(0).toString().isEmpty());  // name
  QVERIFY(!backend.at(0).at(1).toString().isEmpty());  // reason
  QVERIFY(!backend.at(0).at(1).toString().startsWith(backend.at(0).at(0).toString() + QLatin1Char(':')));

  QCOMPARE(info.path, m_model);
  QCOMPARE(info.name, QStringLiteral("tiny"));
  QCOMPARE(info.architecture, QStringLiteral("GPT-2"));
  QCOMPARE(info.layers, 2);
  QCOMPARE(info.embeddingSize, 32);
  QCOMPARE(info.heads, 2);
  QCOMPARE(info.contextLength, 64);
  QCOMPARE(info.vocabSize, 512);
  QCOMPARE(info.ffnDim, 128);
  QCOMPARE(info.parameterCount, static_cast<qint64>(tinyConfig().parameter_count()));
  QVERIFY(!info.hasTokenizer);
  QVERIFY(info.summary().contains(QStringLiteral("2 layers")));
  QVERIFY(!info.details().isEmpty());
}

void TestEngineWorker::missingPathFails() {
  QSignalSpy failed(m_worker, &EngineWorker::loadFailed);
  QSignalSpy loaded(m_worker, &EngineWorker::modelLoaded);
  const QString missing = m_dir.filePath(QStringLiteral("does-not-exist"));
  load(missing);
  QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 10000);
  const QString message = failed.at(0).at(0).toString();
  QVERIFY2(message.contains(missing), qPrintable(message));
  QVERIFY2(message.contains(QStringLiteral("no such file")), qPrintable(message));
  QCOMPARE(loaded.count(), 0);
}

void TestEngineWorker::corruptFileFails_data() {
  QTest::addColumn<QString>("kind");
  QTest::addColumn<QString>("mustMention");  // readable = names what is wrong
  QTest::newRow("random bytes as .bin") << "random-bin"
                                        << "garbage.bin";
  QTest::newRow("truncated safetensors") << "truncated"
                                         << "model.safetensors";
  QTest::newRow("empty safetensors") << "empty"
                                     << "model.safetensors";
  QTest::newRow("config.json not JSON") << "bad-config"
                                        << "config.json";
  QTest::newRow("folder without a model") << "empty-dir"
                                          << "empty-dir";
}

void TestEngineWorker::corruptFileFails() {
  QFETCH(QString, kind);
  QFETCH(QString, mustMention);
  const QString base = m_dir.filePath(QStringLiteral("corrupt-") + kind);
  QString path = base;
  QVERIFY(QDir().mkpath(base));
  const QByteArray good = [&] {
    QFile f(m_model + QStringLiteral("/model.safetensors"));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }();
  QVERIFY(!good.isEmpty());
  const QByteArray config = [&] {
    QFile f(m_model + QStringLiteral("/config.json"));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }();

  if (kind == QLatin1String("random-bin")) {
    path = base + QStringLiteral("/garbage.bin");
    QByteArray junk(4096, '\0');
    for (int i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 2654435761u) >> 13);
    writeFile(path, junk);
  } else if (kind == QLatin1String("truncated")) {
    writeFile(base + QStringLiteral("/config.json"), config);
    writeFile(base + QStringLiteral("/model.safetensors"), good.left(good.size() / 2));
  } else if (kind == QLatin1String("empty")) {
    writeFile(base + QStringLiteral("/config.json"), config);
    writeFile(base + QStringLiteral("/model.safetensors"), {});
  } else if (kind == QLatin1String("bad-config")) {
    writeFile(base + QStringLiteral("/config.json"), "{\"n_layer\": 2, oops");
    writeFile(base + QStringLiteral("/model.safetensors"), good);
  }

  QSignalSpy failed(m_worker, &EngineWorker::loadFailed);
  QSignalSpy loaded(m_worker, &EngineWorker::modelLoaded);
  load(path);
  QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 10000);
  QCOMPARE(loaded.count(), 0);
  const QString message = failed.at(0).at(0).toString();
  qInfo().noquote() << kind << "->" << message;
  QVERIFY2(message.contains(mustMention), qPrintable(message));
  QVERIFY2(message.size() < 2000, "an error message is for people; it should not dump data");
}

void TestEngineWorker::failedLoadKeepsPreviousModel() {
  QVERIFY(loadOk(m_model).isValid());
  QSignalSpy failed(m_worker, &EngineWorker::loadFailed);
  load(m_dir.filePath(QStringLiteral("nope")));
  QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 10000);

  // The worker still has the first model: generation fails for lack of a tokenizer, not of a model.
  QSignalSpy genFailed(m_worker, &EngineWorker::generationFailed);
  QMetaObject::invokeMethod(m_worker, "generate", Qt::QueuedConnection, Q_ARG(QString, QStringLiteral("hi")),
                            Q_ARG(GenerationSettings, GenerationSettings{}), Q_ARG(quint64, 0));
  QTRY_VERIFY_WITH_TIMEOUT(genFailed.count() > 0, 10000);
  QVERIFY2(genFailed.at(0).at(0).toString().contains(QStringLiteral("no tokenizer")),
           qPrintable(genFailed.at(0).at(0).toString()));
}

void TestEngineWorker::cancelDuringLoad() {
  // Direct connection: runs on the worker thread inside the engine's progress callback, the way a
  // click on Cancel lands while the load is running.
  connect(
      m_worker, &EngineWorker::loadProgress, m_worker, [this] { m_worker->requestCancelLoad(); }, Qt::DirectConnection);
  QSignalSpy progress(m_worker, &EngineWorker::loadProgress);
  QSignalSpy cancelled(m_worker, &EngineWorker::loadCancelled);
  QSignalSpy loaded(m_worker, &EngineWorker::modelLoaded);
  QSignalSpy failed(m_worker, &EngineWorker::loadFailed);
  load(m_model);
  QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() > 0, 10000);
  QCOMPARE(cancelled.at(0).at(0).toString(), m_model);
  QCOMPARE(progress.count(), 1);  // stopped at the first step
  QCOMPARE(loaded.count(), 0);
  QCOMPARE(failed.count(), 0);
}

void TestEngineWorker::cancelBeforeStartDoesNotLeak() {
  QSignalSpy cancelled(m_worker, &EngineWorker::loadCancelled);
  const quint64 ticket = m_worker->issueLoadTicket();
  m_worker->requestCancelLoad();  // before the worker has even seen the request
  load(m_model, ticket);
  QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() > 0, 10000);

  // A later request has a newer ticket, so the earlier cancel does not touch it.
  QVERIFY(loadOk(m_model).isValid());
  QCOMPARE(cancelled.count(), 1);
}

void TestEngineWorker::generateWithoutModelFails() {
  QSignalSpy failed(m_worker, &EngineWorker::generationFailed);
  QMetaObject::invokeMethod(m_worker, "generate", Qt::QueuedConnection, Q_ARG(QString, QStringLiteral("hello")),
                            Q_ARG(GenerationSettings, GenerationSettings{}), Q_ARG(quint64, 0));
  QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 10000);
  QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("No model")));
}

void TestEngineWorker::generateStreamsRecords() {
  const ModelInfo info = loadOk(m_modelWithText);
  QVERIFY(info.hasTokenizer);
  QSignalSpy tokens(m_worker, &EngineWorker::tokensGenerated);
  QSignalSpy texts(m_worker, &EngineWorker::tokenGenerated);
  QSignalSpy finished(m_worker, &EngineWorker::generationFinished);
  QSignalSpy failed(m_worker, &EngineWorker::generationFailed);
  GenerationSettings s;
  s.max_tokens = 24;
  s.temperature = 0;  // greedy: reproducible
  QMetaObject::invokeMethod(m_worker, "generate", Qt::QueuedConnection, Q_ARG(QString, QStringLiteral("abc def")),
                            Q_ARG(GenerationSettings, s), Q_ARG(quint64, 0));
  QVERIFY2(waitForSignal(finished, 20000), failed.isEmpty() ? "timeout" : qPrintable(failed.at(0).at(0).toString()));
  const auto stats = finished.at(0).at(0).value<GenerationStats>();
  QVERIFY(stats.promptTokens > 0);
  QCOMPARE(stats.generatedTokens, 24);
  QCOMPARE(stats.finishReason, QStringLiteral("length"));
  QVERIFY(!stats.summary().isEmpty());
  QVERIFY(tokens.count() >= 1);
  QString text;
  for (const auto& args : tokens)
    for (const TokenRecord& r : args.at(0).value<QList<TokenRecord>>()) text += r.text;
  QVERIFY(!text.isEmpty());
  QCOMPARE(texts.count(), 0);  // a raw completion is shown as tokens: one stream, not two
}

void TestEngineWorker::stopEndsGeneration() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  connect(
      m_worker, &EngineWorker::tokensGenerated, m_worker, [this] { m_worker->requestStopGeneration(); },
      Qt::DirectConnection);
  QSignalSpy finished(m_worker, &EngineWorker::generationFinished);
  GenerationSettings s;
  s.max_tokens = 60;
  s.temperature = 0;
  QMetaObject::invokeMethod(m_worker, "generate", Qt::QueuedConnection, Q_ARG(QString, QStringLiteral("abc")),
                            Q_ARG(GenerationSettings, s), Q_ARG(quint64, 0));
  QTRY_VERIFY_WITH_TIMEOUT(finished.count() > 0, 20000);
  const auto stats = finished.at(0).at(0).value<GenerationStats>();
  QCOMPARE(stats.finishReason, QStringLiteral("cancelled"));
  QVERIFY2(stats.generatedTokens < 60, qPrintable(QString::number(stats.generatedTokens)));
}

TestEngineWorker::Run TestEngineWorker::runGeneration(const GenerationSettings& s, const QString& prompt,
                                                      const QList<int>& forced) {
  Run run;
  QSignalSpy batches(m_worker, &EngineWorker::tokensGenerated);
  QSignalSpy texts(m_worker, &EngineWorker::tokenGenerated);
  QSignalSpy finished(m_worker, &EngineWorker::generationFinished);
  QSignalSpy failed(m_worker, &EngineWorker::generationFailed);
  if (forced.isEmpty())
    QMetaObject::invokeMethod(m_worker, "generate", Qt::QueuedConnection, Q_ARG(QString, prompt),
                              Q_ARG(GenerationSettings, s), Q_ARG(quint64, 0));
  else
    QMetaObject::invokeMethod(m_worker, "continueGeneration", Qt::QueuedConnection, Q_ARG(QString, prompt),
                              Q_ARG(QList<int>, forced), Q_ARG(GenerationSettings, s), Q_ARG(quint64, 0));
  QElapsedTimer timer;
  timer.start();
  while (finished.isEmpty() && failed.isEmpty() && timer.elapsed() < 20000) finished.wait(50);
  if (!failed.isEmpty()) run.error = failed.at(0).at(0).toString();
  if (!finished.isEmpty()) run.stats = finished.at(0).at(0).value<GenerationStats>();
  else if (run.error.isEmpty()) run.error = QStringLiteral("timeout");
  for (const auto& args : batches) run.tokens += args.at(0).value<QList<TokenRecord>>();
  for (const TokenRecord& t : run.tokens) run.text += t.text;
  run.batches = static_cast<int>(batches.count());
  // Token requests emit records only; the text stream is the chat's (generateChat).
  if (!texts.isEmpty()) run.error = QStringLiteral("text emitted for a token request");
  return run;
}

static QList<int> idsOf(const QList<TokenRecord>& tokens) {
  QList<int> ids;
  for (const TokenRecord& t : tokens) ids << t.id;
  return ids;
}

// What the Playground sends (alternatives included), made greedy.
static GenerationSettings greedy(int maxTokens) {
  GenerationSettings s = playgroundDefaults();
  s.temperature = 0;
  s.max_tokens = maxTokens;
  return s;
}

void TestEngineWorker::logitBiasForcesToken() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  // By id: a large bias makes token 300 the greedy choice at every step.
  GenerationSettings s = greedy(8);
  s.logit_bias = "300:100";
  Run byId = runGeneration(s);
  QVERIFY2(byId.error.isEmpty(), qPrintable(byId.error));
  QCOMPARE(byId.tokens.size(), 8);
  for (const TokenRecord& t : byId.tokens) QCOMPARE(t.id, 300);

  // By text: "ab" is the merge token 256 + 0 * 16 + 1.
  s.logit_bias = "# comment\nab:100\n";
  Run byText = runGeneration(s);
  QVERIFY2(byText.error.isEmpty(), qPrintable(byText.error));
  QCOMPARE(byText.tokens.size(), 8);
  for (const TokenRecord& t : byText.tokens) QCOMPARE(t.id, 257);
  QCOMPARE(byText.text, QStringLiteral("ab").repeated(8));

  // Banning the greedy choice changes it: bias reaches the engine with -inf too.
  const Run plain = runGeneration(greedy(1));
  s = greedy(1);
  s.logit_bias = (QStringLiteral("%1:-inf").arg(plain.tokens.at(0).id)).toStdString();
  const Run banned = runGeneration(s);
  QCOMPARE(banned.tokens.size(), 1);
  QVERIFY(banned.tokens.at(0).id != plain.tokens.at(0).id);
}

void TestEngineWorker::logitBiasErrorsNameTheLine() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  GenerationSettings s = greedy(4);
  s.logit_bias = "12:1\nab:lots";
  Run run = runGeneration(s);
  QVERIFY2(run.error.contains(QStringLiteral("line 2")), qPrintable(run.error));
  s.logit_bias = "99999:1";
  run = runGeneration(s);
  QVERIFY2(run.error.contains(QStringLiteral("out of range")), qPrintable(run.error));
}

void TestEngineWorker::penaltiesAndWindowReachTheEngine() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  // Bias makes 300 the greedy choice every time; each penalty, applied after the bias, must stop
  // it from coming back once it has appeared.
  auto count300 = [](const Run& run) {
    int n = 0;
    for (const TokenRecord& t : run.tokens) n += t.id == 300;
    return n;
  };
  GenerationSettings s = greedy(8);
  s.logit_bias = "300:50";
  s.repeat_last_n = -1;
  QCOMPARE(count300(runGeneration(s)), 8);
  GenerationSettings p = s;
  p.presence_penalty = 100;  // the most the field accepts
  QCOMPARE(count300(runGeneration(p)), 1);
  p = s;
  p.frequency_penalty = 100;
  QCOMPARE(count300(runGeneration(p)), 1);
  // The repetition penalty divides a positive logit, so the bias must be one it can overcome.
  p = s;
  p.logit_bias = "300:2";
  const Run biased = runGeneration(p);
  QCOMPARE(count300(biased), 8);
  p.repeat_penalty = 100;
  QCOMPARE(count300(runGeneration(p)), 1);
  // Window of one token: 300 is only barred right after itself, so it alternates.
  p = s;
  p.presence_penalty = 100;  // the most the field accepts
  p.repeat_last_n = 1;
  const Run alternating = runGeneration(p);
  QCOMPARE(count300(alternating), 4);
  for (int i = 1; i < alternating.tokens.size(); ++i)
    QVERIFY(!(alternating.tokens[i].id == 300 && alternating.tokens[i - 1].id == 300));
  // Window 0 turns the penalties off.
  p.repeat_last_n = 0;
  QCOMPARE(count300(runGeneration(p)), 8);
  // min_p = 1 keeps only the most likely token: sampling at any temperature becomes greedy.
  GenerationSettings m;
  m.temperature = 1.5;
  m.top_k = 0;
  m.top_p = 1;
  m.min_p = 1;
  m.max_tokens = 12;
  m.seed = 5;
  QCOMPARE(idsOf(runGeneration(m).tokens), idsOf(runGeneration(greedy(12)).tokens));
}

void TestEngineWorker::logitBiasParserForms() {
  auto model = engine::load_model(m_modelWithText.toStdString());
  const engine::Tokenizer& tok = *model->tokenizer();
  using Entries = std::vector<std::pair<int32_t, float>>;
  const float inf = std::numeric_limits<float>::infinity();
  QCOMPARE(parseLogitBias(QString(), tok).entries, Entries{});
  QCOMPARE(parseLogitBias(QStringLiteral("\n  \n# note\n"), tok).entries, Entries{});
  QCOMPARE(parseLogitBias(QStringLiteral("5:1.5\r\n 7 : -2"), tok).entries, (Entries{{5, 1.5f}, {7, -2.f}}));
  QCOMPARE(parseLogitBias(QStringLiteral("9:ban\n10:-INF"), tok).entries, (Entries{{9, -inf}, {10, -inf}}));
  // Text keys: tokenized; a quoted number is text, and the split is at the last colon.
  QCOMPARE(parseLogitBias(QStringLiteral("abcd:2"), tok).entries, (Entries{{257, 2.f}, {256 + 2 * 16 + 3, 2.f}}));
  QCOMPARE(parseLogitBias(QStringLiteral("\"42\":1"), tok).entries, (Entries{{'4', 1.f}, {'2', 1.f}}));
  QCOMPARE(parseLogitBias(QStringLiteral("a:b:3"), tok).entries, (Entries{{'a', 3.f}, {':', 3.f}, {'b', 3.f}}));
  QVERIFY(parseLogitBias(QStringLiteral("no colon here"), tok).error.contains(QStringLiteral("line 1")));
  QVERIFY(!parseLogitBias(QStringLiteral(":3"), tok).error.isEmpty());
  QVERIFY(!parseLogitBias(QStringLiteral("5:nan"), tok).error.isEmpty());
  QVERIFY(!parseLogitBias(QStringLiteral("512:1"), tok).error.isEmpty());  // vocabulary is 0..511
}

void TestEngineWorker::stopStringEndsGeneration() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  GenerationSettings s = greedy(20);
  s.logit_bias = "ab:100";  // output "ababab...": "ba" first appears after two tokens
  s.stop = {"zz", "ba"};
  const Run run = runGeneration(s);
  QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
  QCOMPARE(run.stats.finishReason, QStringLiteral("stop"));
  QCOMPARE(run.stats.generatedTokens, 2);
  QCOMPARE(run.text, QStringLiteral("abab"));  // the records are the tokens as generated
  // The text stream (a chat reply) ends before the stop string.
  QSignalSpy texts(m_worker, &EngineWorker::tokenGenerated);
  QSignalSpy finished(m_worker, &EngineWorker::generationFinished);
  QMetaObject::invokeMethod(m_worker, "generateChat", Qt::QueuedConnection,
                            Q_ARG(QList<ChatTurn>, (QList<ChatTurn>{{QStringLiteral("user"), QStringLiteral("abc")}})),
                            Q_ARG(QString, QString()), Q_ARG(GenerationSettings, s), Q_ARG(quint64, 0));
  QVERIFY(waitForSignal(finished, 20000));
  QString text;
  for (const auto& args : texts) text += args.at(0).toString();
  QCOMPARE(finished.at(0).at(0).value<GenerationStats>().finishReason, QStringLiteral("stop"));
  QCOMPARE(text, QStringLiteral("a"));
}

void TestEngineWorker::seedReproducesSampling() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  GenerationSettings s;
  s.temperature = 1.5;
  s.top_k = 0;
  s.top_p = 1;
  s.min_p = 0;
  s.max_tokens = 24;
  s.seed = 42;
  const Run a = runGeneration(s);
  const Run b = runGeneration(s);
  QVERIFY2(a.error.isEmpty(), qPrintable(a.error));
  QCOMPARE(a.stats.seed, quint64(42));
  QCOMPARE(idsOf(a.tokens), idsOf(b.tokens));
  s.seed = 43;
  const Run c = runGeneration(s);
  QVERIFY(idsOf(a.tokens) != idsOf(c.tokens));
  // top_k = 1 turns sampling into greedy whatever the seed: top_k reaches the engine.
  s.top_k = 1;
  const Run k1 = runGeneration(s);
  QCOMPARE(idsOf(k1.tokens), idsOf(runGeneration(greedy(24)).tokens));
}

void TestEngineWorker::topLogprobsSortedAndBounded() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  GenerationSettings s = greedy(10);
  s.top_logprobs = 7;
  const Run run = runGeneration(s);
  QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
  QCOMPARE(run.tokens.size(), 10);
  for (const TokenRecord& t : run.tokens) {
    QCOMPARE(t.alternatives.size(), 7);
    double sum = 0;
    for (int i = 0; i < t.alternatives.size(); ++i) {
      if (i > 0) QVERIFY(t.alternatives[i - 1].logprob >= t.alternatives[i].logprob);
      QVERIFY(t.alternatives[i].logprob <= 0);
      sum += std::exp(t.alternatives[i].logprob);
    }
    QVERIFY2(sum <= 1.0 + 1e-5, qPrintable(QString::number(sum)));
    QCOMPARE(t.alternatives[0].id, t.id);  // greedy picks the most likely token
    QCOMPARE(t.logprob, t.alternatives[0].logprob);
    QVERIFY(!t.alternatives[0].text.isEmpty());
  }
  s.top_logprobs = 0;
  const Run none = runGeneration(s);
  for (const TokenRecord& t : none.tokens) QVERIFY(t.alternatives.isEmpty());
}

void TestEngineWorker::forcedAlternativeContinuesFromIt() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  GenerationSettings s = greedy(10);
  const Run original = runGeneration(s);
  QVERIFY2(original.error.isEmpty(), qPrintable(original.error));
  QCOMPARE(original.tokens.size(), 10);
  const QList<int> ids = idsOf(original.tokens);

  // Forcing the tokens it chose anyway reproduces the rest: positions line up.
  const Run same = runGeneration(s, QStringLiteral("abc def"), ids.mid(0, 4));
  QCOMPARE(idsOf(same.tokens), ids.mid(4));
  QCOMPARE(same.stats.generatedTokens, 10);

  // Force the second most likely token at position 3; what follows is greedy from there.
  const int alt = original.tokens.at(3).alternatives.at(1).id;
  QVERIFY(alt != ids.at(3));
  QList<int> forced = ids.mid(0, 3);
  forced << alt;
  const Run changed = runGeneration(s, QStringLiteral("abc def"), forced);
  QVERIFY2(changed.error.isEmpty(), qPrintable(changed.error));
  QCOMPARE(changed.tokens.size(), 6);  // maxTokens counts the forced ones

  // Reference: the engine itself, greedy from prompt + forced ids.
  auto model = engine::load_model(m_modelWithText.toStdString());
  auto backend = engine::choose_backend(engine::BackendPreference::Auto, 1).backend;
  engine::Generator generator(*model, *backend);
  std::vector<int32_t> prompt = model->tokenizer()->encode("abc def");
  prompt.insert(prompt.end(), forced.begin(), forced.end());
  engine::GenerateParams params;
  params.max_tokens = 6;
  params.sampler.temperature = 0;
  const engine::GenerationResult expected = generator.generate(prompt, params);
  QList<int> expectedIds;
  for (const auto& t : expected.tokens) expectedIds << t.id;
  QCOMPARE(idsOf(changed.tokens), expectedIds);  // records of the new tokens only

  QVERIFY(runGeneration(s, QStringLiteral("abc"), QList<int>{100000}).error.contains(QStringLiteral("vocabulary")));
}

void TestEngineWorker::promptTokenizationRoundTrips() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  QSignalSpy spy(m_worker, &EngineWorker::promptTokenized);
  const QString text = QStringLiteral("abc def, ghij  k!");
  QMetaObject::invokeMethod(m_worker, "tokenizePrompt", Qt::QueuedConnection, Q_ARG(QString, text), Q_ARG(quint64, 7));
  QVERIFY(waitForSignal(spy, 10000));
  QCOMPARE(spy.at(0).at(0).toULongLong(), quint64(7));
  const auto pieces = spy.at(0).at(1).value<QList<TokenRecord>>();
  QVERIFY(pieces.size() > 3);
  QString joined;
  for (const TokenRecord& p : pieces) joined += p.text;
  QCOMPARE(joined, text);
  auto model = engine::load_model(m_modelWithText.toStdString());
  const std::vector<int32_t> expected = model->tokenizer()->encode(text.toStdString());
  QCOMPARE(idsOf(pieces), QList<int>(expected.begin(), expected.end()));
  QCOMPARE(pieces.at(0).id, 257);  // "ab" merged
}

void TestEngineWorker::tokenRecordsAreBatched() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  // A long interval: the first token goes out at once, everything else in one batch at the end.
  m_worker->setTokenFlushInterval(60000);
  Run run = runGeneration(greedy(30));
  QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
  QCOMPARE(run.tokens.size(), 30);
  QCOMPARE(run.batches, 2);
  // No interval: one signal per token; the records' text is the tokens' text.
  m_worker->setTokenFlushInterval(0);
  const Run each = runGeneration(greedy(30));
  QCOMPARE(each.batches, 30);
  QCOMPARE(idsOf(each.tokens), idsOf(run.tokens));
  auto model = engine::load_model(m_modelWithText.toStdString());
  const QList<int> ids = idsOf(each.tokens);
  QCOMPARE(each.text, QString::fromStdString(model->tokenizer()->decode(std::vector<int32_t>(ids.begin(), ids.end()))));
}

void TestEngineWorker::recordsHoldBackPartialCharacters() {
  QVERIFY(loadOk(m_modelWithText).isValid());
  // Bias + a one-token presence window make the bytes C3 A9 ("é") alternate: C3 A9 C3 A9.
  GenerationSettings s = greedy(4);
  s.logit_bias = "195:100\n169:99";
  s.presence_penalty = 100;
  s.repeat_last_n = 1;
  const Run run = runGeneration(s);
  QVERIFY2(run.error.isEmpty(), qPrintable(run.error));
  QCOMPARE(idsOf(run.tokens), (QList<int>{195, 169, 195, 169}));
  QCOMPARE(run.tokens[0].text, QString());  // the lead byte alone is not a character yet
  QCOMPARE(run.tokens[1].text, QStringLiteral("\u00e9"));
  QCOMPARE(run.tokens[3].text, QStringLiteral("\u00e9"));
  QCOMPARE(run.text, QStringLiteral("\u00e9\u00e9"));
  // Sent one by one, a record waits for the rest of its character; one cut off by the end of
  // generation shows its bytes on the last token instead of being lost.
  m_worker->setTokenFlushInterval(0);
  s.max_tokens = 3;
  const Run cut = runGeneration(s);
  QVERIFY2(cut.error.isEmpty(), qPrintable(cut.error));
  QCOMPARE(idsOf(cut.tokens), (QList<int>{195, 169, 195}));
  QCOMPARE(cut.batches, 2);  // {195, 169} once the character was whole, then {195} at the end
  QCOMPARE(cut.tokens[2].text, QStringLiteral("\\xc3"));
  // Prompt pieces of a split character show their bytes instead of replacement characters.
  QSignalSpy spy(m_worker, &EngineWorker::promptTokenized);
  QMetaObject::invokeMethod(m_worker, "tokenizePrompt", Qt::QueuedConnection, Q_ARG(QString, QStringLiteral("\u00e9")),
                            Q_ARG(quint64, 1));
  QVERIFY(waitForSignal(spy, 10000));
  const auto pieces = spy.at(0).at(1).value<QList<TokenRecord>>();
  QCOMPARE(pieces.size(), 2);
  QCOMPARE(pieces[0].text, QStringLiteral("\\xc3"));
  QCOMPARE(pieces[1].text, QStringLiteral("\\xa9"));
}

QTEST_GUILESS_MAIN(TestEngineWorker)
#include "test_engine_worker.moc"
