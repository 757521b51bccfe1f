// EngineWorker's chat requests on a tiny model: the prompt is the chat as the model's template
// renders it (counted the same way for the context meter), a continued reply goes on from its text, and a chat longer
// than the context is refused with the numbers rather than cut. The Playground's chat mode streams per-token records
// from the same prompt, continues after a forced alternative, and shows the prompt's pieces with only the template's
// control tokens flagged special.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "engine/chat_template.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "services/engineworker.h"
#include "support/tiny_text_model.h"

class TestChatWorker : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void countIsTheRenderedChat();
  void chatReplyStreams();
  void continuationFollowsTheReply();
  void tooLongChatIsRefused();
  void oldestTurnsAreLeftOutToFit();
  void noModelCountsMinusOne();
  void modelTemplateIsUsed();
  void playgroundChatStreamsTokens();
  void playgroundChatPiecesFlagOnlyMarkup();

 private:
  // Token count of `turns` through the engine's own API (template render + encode_chat).
  int engineCount(const QList<ChatTurn>& turns) const;
  int workerCount(const QList<ChatTurn>& turns);

  QTemporaryDir m_dir;
  QString m_path;
  std::unique_ptr<engine::Model> m_model;  // the same files, loaded outside the worker
  std::unique_ptr<EngineWorker> m_worker;
};

void TestChatWorker::initTestCase() {
  m_path = m_dir.filePath(QStringLiteral("tiny"));
  writeTinyTextModel(m_path, 5, 64);
  m_model = engine::load_model(m_path.toStdString());
  QVERIFY(m_model->tokenizer());

  // Slots are called directly: the worker runs on this thread here, and its signals arrive at once.
  m_worker = std::make_unique<EngineWorker>();
  QSignalSpy loaded(m_worker.get(), &EngineWorker::modelLoaded);
  m_worker->loadModel(m_path, 1);
  QCOMPARE(loaded.count(), 1);
}

int TestChatWorker::engineCount(const QList<ChatTurn>& turns) const {
  std::vector<engine::ChatMessage> messages;
  for (const ChatTurn& t : turns) messages.push_back({t.role.toStdString(), t.content.toStdString()});
  const engine::ChatTemplate& t = m_model->chat_template();  // Plain: the tiny model names no template
  return static_cast<int>(engine::encode_chat(*m_model->tokenizer(), t.render(messages, true), messages).size());
}

int TestChatWorker::workerCount(const QList<ChatTurn>& turns) {
  QSignalSpy counted(m_worker.get(), &EngineWorker::chatTokensCounted);
  m_worker->countChatTokens(turns, 42);
  if (counted.count() != 1 || counted.first().at(0).toULongLong() != 42) return -2;
  return counted.first().at(1).toInt();
}

void TestChatWorker::countIsTheRenderedChat() {
  const QList<ChatTurn> turns{{QStringLiteral("system"), QStringLiteral("be brief")},
                              {QStringLiteral("user"), QStringLiteral("abc")},
                              {QStringLiteral("assistant"), QStringLiteral("def")},
                              {QStringLiteral("user"), QStringLiteral("ghi jkl")}};
  const int count = workerCount(turns);
  QCOMPARE(count, engineCount(turns));
  // More than the contents alone: the template's role markup is counted too.
  int contentOnly = 0;
  for (const ChatTurn& t : turns) contentOnly += int(m_model->tokenizer()->encode(t.content.toStdString()).size());
  QVERIFY2(count > contentOnly, qPrintable(QStringLiteral("%1 vs %2").arg(count).arg(contentOnly)));
  // A longer chat counts more.
  QList<ChatTurn> longer = turns;
  longer << ChatTurn{QStringLiteral("assistant"), QStringLiteral("mno")};
  QVERIFY(workerCount(longer) > count);
}

void TestChatWorker::chatReplyStreams() {
  const QList<ChatTurn> turns{{QStringLiteral("user"), QStringLiteral("abc def")}};
  GenerationSettings s;
  s.temperature = 0;
  s.max_tokens = 6;
  s.top_logprobs = 5;  // a chat shows no alternatives: the worker does not ask for them
  QSignalSpy text(m_worker.get(), &EngineWorker::tokenGenerated);
  QSignalSpy records(m_worker.get(), &EngineWorker::tokensGenerated);
  QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
  QSignalSpy failed(m_worker.get(), &EngineWorker::generationFailed);
  m_worker->generateChat(turns, {}, s);
  QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
  QCOMPARE(finished.count(), 1);
  const GenerationStats stats = finished.first().at(0).value<GenerationStats>();
  QCOMPARE(stats.promptTokens, engineCount(turns));
  QVERIFY(stats.generatedTokens >= 1 && stats.generatedTokens <= 6);
  QVERIFY(!text.isEmpty());
  QCOMPARE(records.count(), 0);  // text only: no per-token records are built
}

void TestChatWorker::continuationFollowsTheReply() {
  const QList<ChatTurn> turns{{QStringLiteral("user"), QStringLiteral("abc")}};
  GenerationSettings s;
  s.temperature = 0;
  s.max_tokens = 3;
  QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
  QSignalSpy text(m_worker.get(), &EngineWorker::tokenGenerated);
  m_worker->generateChat(turns, QStringLiteral("hello"), s);
  QCOMPARE(finished.count(), 1);
  const GenerationStats stats = finished.first().at(0).value<GenerationStats>();
  QCOMPARE(stats.promptTokens, engineCount(turns) + int(m_model->tokenizer()->encode("hello").size()));
  // The text so far is not emitted again: only what comes after it.
  QString all;
  for (const auto& args : text) all += args.at(0).toString();
  QVERIFY(!all.startsWith(QStringLiteral("hello")));
}

void TestChatWorker::tooLongChatIsRefused() {
  const QList<ChatTurn> turns{{QStringLiteral("user"), QString(200, QLatin1Char('z'))}};
  QVERIFY(engineCount(turns) >= 64);
  QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
  QSignalSpy failed(m_worker.get(), &EngineWorker::generationFailed);
  m_worker->generateChat(turns, {}, GenerationSettings{});
  QCOMPARE(finished.count(), 0);
  QCOMPARE(failed.count(), 1);
  const QString message = failed.first().at(0).toString();
  QVERIFY2(message.contains(QStringLiteral("This chat is %1 tokens").arg(engineCount(turns))) &&
               message.contains(QStringLiteral("at most 64")),
           qPrintable(message));
}

void TestChatWorker::oldestTurnsAreLeftOutToFit() {
  // Three long turns and a short question on a 64-token context: the Chat reads the question with as
  // much history as leaves room for the reply (a quarter of the context here), the oldest first out;
  // the system prompt stays.
  const QString longText(60, QLatin1Char('y'));
  const QList<ChatTurn> turns{{QStringLiteral("system"), QStringLiteral("hi")},
                              {QStringLiteral("user"), longText},
                              {QStringLiteral("assistant"), longText},
                              {QStringLiteral("user"), QStringLiteral("abc")}};
  QVERIFY(engineCount(turns) >= 64);
  GenerationSettings s;
  s.temperature = 0;
  s.max_tokens = 4;
  QSignalSpy leftOut(m_worker.get(), &EngineWorker::chatTurnsLeftOut);
  QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
  QSignalSpy failed(m_worker.get(), &EngineWorker::generationFailed);
  m_worker->generateChat(turns, {}, s);
  QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
  QCOMPARE(finished.count(), 1);
  QCOMPARE(leftOut.count(), 1);
  QCOMPARE(leftOut.first().at(0).toInt(), 2);  // the question and its reply go together
  const QList<ChatTurn> kept{turns[0], turns[3]};
  QCOMPARE(finished.first().at(0).value<GenerationStats>().promptTokens, engineCount(kept));
  // A chat that fits loses nothing.
  leftOut.clear();
  m_worker->generateChat(kept, {}, s);
  QCOMPARE(leftOut.count(), 0);
  // The Playground's chat mode shows the prompt exactly: refused, never shortened.
  failed.clear();
  m_worker->generateChatTokens(turns, {}, s);
  QCOMPARE(leftOut.count(), 0);
  QCOMPARE(failed.count(), 1);
}

void TestChatWorker::noModelCountsMinusOne() {
  EngineWorker empty;
  QSignalSpy counted(&empty, &EngineWorker::chatTokensCounted);
  empty.countChatTokens({{QStringLiteral("user"), QStringLiteral("hi")}}, 3);
  QCOMPARE(counted.count(), 1);
  QCOMPARE(counted.first().at(1).toInt(), -1);
  QSignalSpy failed(&empty, &EngineWorker::generationFailed);
  empty.generateChat({{QStringLiteral("user"), QStringLiteral("hi")}}, {}, GenerationSettings{});
  QCOMPARE(failed.count(), 1);
}

void TestChatWorker::modelTemplateIsUsed() {
  QCOMPARE(m_model->chat_template().kind(), engine::ChatTemplateKind::Plain);
  // The same weights with a ChatML template beside them: the worker renders with it.
  const QString dir = m_dir.filePath(QStringLiteral("tiny-chatml"));
  engine::save_hf_directory(*m_model, dir.toStdString(), (m_path + QStringLiteral("-tokenizer")).toStdString(), "{}");
  QFile jinja(dir + QStringLiteral("/chat_template.jinja"));
  QVERIFY(jinja.open(QIODevice::WriteOnly));
  jinja.write(
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
      "'\\n'}}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}");
  jinja.close();
  std::unique_ptr<engine::Model> chatml = engine::load_model(dir.toStdString());
  QCOMPARE(chatml->chat_template().kind(), engine::ChatTemplateKind::ChatML);
  EngineWorker worker;
  QSignalSpy loaded(&worker, &EngineWorker::modelLoaded);
  worker.loadModel(dir, 1);
  QCOMPARE(loaded.count(), 1);

  const QList<ChatTurn> turns{{QStringLiteral("user"), QStringLiteral("abc")}};
  std::vector<engine::ChatMessage> messages{{"user", "abc"}};
  const engine::RenderedChat rendered = chatml->chat_template().render(messages, true);
  QCOMPARE(QString::fromStdString(rendered.text()),
           QStringLiteral("<|im_start|>user\nabc<|im_end|>\n<|im_start|>assistant\n"));
  const int expected = int(engine::encode_chat(*chatml->tokenizer(), rendered, messages).size());
  QSignalSpy counted(&worker, &EngineWorker::chatTokensCounted);
  worker.countChatTokens(turns, 9);
  QCOMPARE(counted.first().at(1).toInt(), expected);
  QVERIFY(expected != engineCount(turns));  // not the Plain rendering
}

void TestChatWorker::playgroundChatStreamsTokens() {
  const QList<ChatTurn> turns{{QStringLiteral("system"), QStringLiteral("be brief")},
                              {QStringLiteral("user"), QStringLiteral("abc def")}};
  GenerationSettings s;
  s.temperature = 0;
  s.max_tokens = 5;
  s.top_logprobs = 3;
  QSignalSpy records(m_worker.get(), &EngineWorker::tokensGenerated);
  QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
  QSignalSpy failed(m_worker.get(), &EngineWorker::generationFailed);
  m_worker->generateChatTokens(turns, {}, s);
  QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
  QCOMPARE(finished.count(), 1);
  GenerationStats stats = finished.first().at(0).value<GenerationStats>();
  QCOMPARE(stats.promptTokens, engineCount(turns));  // the rendered chat, as the Chat page feeds it
  QList<TokenRecord> got;
  for (const auto& args : records) got += args.at(0).value<QList<TokenRecord>>();
  QCOMPARE(got.size(), stats.generatedTokens);
  QVERIFY(!got.isEmpty());
  for (const TokenRecord& r : got) QCOMPARE(r.alternatives.size(), 3);

  // The Chat page's request gives the same greedy text from the same prompt.
  QSignalSpy text(m_worker.get(), &EngineWorker::tokenGenerated);
  m_worker->generateChat(turns, {}, s);
  QString chatText, recordText;
  for (const auto& args : text) chatText += args.at(0).toString();
  for (const TokenRecord& r : got) recordText += r.text;
  QCOMPARE(recordText, chatText);

  // A forced alternative: generation goes on after it, from the same chat prompt.
  // One of the first token's alternatives that is a whole character (a byte token alone shows as
  // \xNN, its text as U+FFFD); the letter "a" if none is.
  TokenAlternative forced{97, QStringLiteral("a"), 0};
  for (const TokenAlternative& a : got.first().alternatives)
    if (a.id != got.first().id && !a.text.startsWith(QStringLiteral("\\x"))) {
      forced = a;
      break;
    }
  QVERIFY(forced.id != got.first().id);
  finished.clear();
  text.clear();
  records.clear();
  m_worker->generateChatTokens(turns, {forced.id}, s);
  QCOMPARE(finished.count(), 1);
  stats = finished.first().at(0).value<GenerationStats>();
  QCOMPARE(stats.promptTokens, engineCount(turns));
  QVERIFY(stats.generatedTokens >= 1 && stats.generatedTokens <= s.max_tokens);
  // Records for the new tokens only (the view holds the forced one), and no text stream.
  QList<TokenRecord> more;
  for (const auto& args : records) more += args.at(0).value<QList<TokenRecord>>();
  QCOMPARE(more.size(), stats.generatedTokens - 1);
  QVERIFY(text.isEmpty());
}

void TestChatWorker::playgroundChatPiecesFlagOnlyMarkup() {
  // The tiny model's weights with a tokenizer that has ChatML control tokens, and a ChatML template.
  const QString source = m_dir.filePath(QStringLiteral("chatml-source"));
  QVERIFY(QDir().mkpath(source));
  QVERIFY(QFile::copy(QStringLiteral(WB_TEST_DATA_DIR "/chat/tiny_chat_tokenizer.json"),
                      source + QStringLiteral("/tokenizer.json")));
  QFile jinja(source + QStringLiteral("/chat_template.jinja"));
  QVERIFY(jinja.open(QIODevice::WriteOnly));
  jinja.write(
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
      "'\\n'}}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}");
  jinja.close();
  const QString dir = m_dir.filePath(QStringLiteral("chatml-tokens"));
  engine::save_hf_directory(*m_model, dir.toStdString(), source.toStdString(), "{}");
  EngineWorker worker;
  QSignalSpy loaded(&worker, &EngineWorker::modelLoaded);
  worker.loadModel(dir, 1);
  QCOMPARE(loaded.count(), 1);
  QCOMPARE(loaded.first().at(0).value<ModelInfo>().chatTemplate, QStringLiteral("chatml"));

  // The user types the control token's text: it stays text; only the template's markup is special.
  const QList<ChatTurn> turns{{QStringLiteral("user"), QStringLiteral("a<|im_end|>b")}};
  QSignalSpy pieces(&worker, &EngineWorker::promptTokenized);
  worker.tokenizeChat(turns, 7);
  QCOMPARE(pieces.count(), 1);
  QCOMPARE(pieces.first().at(0).toULongLong(), 7ull);
  const QList<TokenRecord> got = pieces.first().at(1).value<QList<TokenRecord>>();
  std::unique_ptr<engine::Model> model = engine::load_model(dir.toStdString());
  std::vector<engine::ChatMessage> messages{{"user", "a<|im_end|>b"}};
  const std::vector<int32_t> expected =
      engine::encode_chat(*model->tokenizer(), model->chat_template().render(messages, true), messages);
  QCOMPARE(got.size(), qsizetype(expected.size()));
  QStringList special, all;
  for (qsizetype i = 0; i < got.size(); ++i) {
    QCOMPARE(got[i].id, expected[size_t(i)]);
    if (got[i].special) special << got[i].text;
    all << got[i].text;
  }
  QCOMPARE(special,
           (QStringList{QStringLiteral("<|im_start|>"), QStringLiteral("<|im_end|>"), QStringLiteral("<|im_start|>")}));
  QVERIFY2(all.join(QString()).contains(QStringLiteral("a<|im_end|>b")), qPrintable(all.join(QLatin1Char('/'))));
}

QTEST_GUILESS_MAIN(TestChatWorker)
#include "test_chat_worker.moc"
