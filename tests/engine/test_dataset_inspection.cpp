// The wizard's look at a data file before training (engine/train/dataset_inspection.h): format
// detection (plain text, JSONL chat messages, Alpaca), the preview, every bad row with its line
// number (not only the first), token counts per row against an independent encode of each row, rows
// over the sequence length, the train/validation split as prepare_training_data makes it, and a stop
// from the progress callback.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "engine/chat_template.h"
#include "engine/tokenizer.h"
#include "engine/train/dataset_inspection.h"
#include "support/data_files.h"
#include "support/error_of.h"

namespace {

std::string chat(const std::string& user, const std::string& assistant) {
  return R"({"messages":[{"role":"user","content":")" + user + R"("},{"role":"assistant","content":")" + assistant +
         "\"}]}\n";
}

}  // namespace

class TestDatasetInspection : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  std::unique_ptr<engine::Tokenizer> m_tok = gpt2();

 private slots:
  void formats_are_detected_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("rows");
    QTest::newRow("plain text") << QByteArray("Once upon a time.\n\nThe end.\n") << "text" << 2;
    QTest::newRow("messages") << QByteArray((chat("hi", "hello") + chat("a", "b")).c_str()) << "messages" << 2;
    QTest::newRow("alpaca") << QByteArray("{\"instruction\":\"Add\",\"input\":\"1+1\",\"output\":\"2\"}\n") << "alpaca"
                            << 1;
    QTest::newRow("jsonl after BOM and blanks")
        << QByteArray("\xEF\xBB\xBF\n  " + QByteArray(chat("x", "y").c_str())) << "messages" << 1;
  }
  void formats_are_detected() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, format);
    QFETCH(int, rows);
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "formats.data", bytes.toStdString());
    const engine::DatasetInspection r = engine::inspect_dataset(o, nullptr);
    QCOMPARE(QString::fromStdString(r.format), format);
    QCOMPARE(r.rows, uint64_t(rows));
    QCOMPARE(r.bad_rows, uint64_t(0));
    QCOMPARE(r.recipe, format == "text" ? engine::Recipe::Pretrain : engine::Recipe::Sft);
    QVERIFY(!r.tokens_counted);  // no tokenizer given
  }

  void preview_shows_the_first_rows() {
    std::string text;
    for (int i = 1; i <= 8; ++i) text += chat("question " + std::to_string(i), "answer " + std::to_string(i));
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "preview.jsonl", text);
    o.preview_rows = 3;
    const engine::DatasetInspection r = engine::inspect_dataset(o, nullptr);
    QCOMPARE(r.preview.size(), size_t(3));
    QCOMPARE(r.preview[2].line, uint64_t(3));
    QCOMPARE(r.preview[2].messages[0].content, std::string("question 3"));
    QCOMPARE(r.preview[2].messages[1].role, std::string("assistant"));

    o.path = write_file(m_dir, "preview.txt", "first line\r\n\nsecond line\n");
    const engine::DatasetInspection t = engine::inspect_dataset(o, nullptr);
    QCOMPARE(t.preview.size(), size_t(2));
    QCOMPARE(t.preview[1].messages[0].content, std::string("second line"));
    QCOMPARE(t.preview[1].line, uint64_t(3));
  }

  void every_bad_row_is_listed_with_its_line() {
    const std::string good = chat("hi", "hello");
    const std::string text = good +                  // 1
                             "{\"messages\": [\n" +  // 2 bad JSON
                             good +                  // 3
                             "\n" +                  // 4 blank: skipped
                             R"({"messages":[{"role":"user","content":"only me"}]})"
                             "\n"  // 5 no assistant
                             R"({"messages":[{"role":"robot","content":"beep"}]})"
                             "\n"     // 6 unknown role
                             + good;  // 7
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "bad.jsonl", text);
    const engine::DatasetInspection r = engine::inspect_dataset(o, m_tok.get());
    QCOMPARE(r.rows, uint64_t(6));
    QCOMPARE(r.bad_rows, uint64_t(3));
    QCOMPARE(r.problems.size(), size_t(3));
    QCOMPARE(r.problems[0].line, uint64_t(2));
    QVERIFY2(r.problems[0].message.rfind("bad JSON", 0) == 0, r.problems[0].message.c_str());
    QCOMPARE(r.problems[1].line, uint64_t(5));
    QVERIFY(r.problems[1].message.find("no assistant message") != std::string::npos);
    QCOMPARE(r.problems[2].line, uint64_t(6));
    QVERIFY(r.problems[2].message.find("unknown role") != std::string::npos);
    QCOMPARE(r.train_rows + r.val_rows, uint64_t(3));  // only the good rows train

    o.max_problems = 1;
    const engine::DatasetInspection capped = engine::inspect_dataset(o, nullptr);
    QCOMPARE(capped.problems.size(), size_t(1));
    QCOMPARE(capped.bad_rows, uint64_t(3));
  }

  void whole_file_errors_throw_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("needle");
    QTest::newRow("empty") << QByteArray() << "the data file is empty";
    QTest::newRow("latin-1 text") << QByteArray("ok\ncaf\xE9\n") << "line 2, byte 4: invalid UTF-8";
    QTest::newRow("latin-1 jsonl") << QByteArray("{\"a\":\"caf\xE9\"}") << "invalid UTF-8";
  }
  void whole_file_errors_throw() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, needle);
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "whole.data", bytes.toStdString());
    const QString err = error_of([&] { engine::inspect_dataset(o, m_tok.get()); });
    QVERIFY2(err.contains(needle), qPrintable(err));
  }

  void chat_token_counts_and_split() {
    // Rows of clearly different lengths; counts must equal encoding each rendered conversation alone.
    const std::vector<std::pair<std::string, std::string>> rows = {{"hi", "hello"},
                                                                   {"how are you", "fine thanks"},
                                                                   {"tell me a long story please",
                                                                    "once upon a time there was a fox"},
                                                                   {"a", "b"},
                                                                   {"what is two plus two", "four"}};
    std::string text;
    for (const auto& [u, a] : rows) text += chat(u, a);
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "counts.jsonl", text);
    o.chat_template = *engine::ChatTemplate::from_name("chatml");
    o.val_fraction = 0.4;  // floor(5 * 0.4) = 2 conversations: the last two
    std::vector<uint64_t> expect;
    for (const auto& [u, a] : rows) {
      const std::vector<engine::ChatMessage> msgs = {{"user", u}, {"assistant", a}};
      expect.push_back(engine::encode_chat(*m_tok, o.chat_template.render(msgs, false), msgs).size());
    }
    uint64_t mid = expect[2];
    o.seq = int(mid) - 1;  // only the longest row is over
    const engine::DatasetInspection r = engine::inspect_dataset(o, m_tok.get());
    QVERIFY(r.tokens_counted);
    uint64_t total = 0;
    for (uint64_t n : expect) total += n;
    QCOMPARE(r.total_tokens, total);
    QCOMPARE(r.min_row_tokens, *std::min_element(expect.begin(), expect.end()));
    QCOMPARE(r.max_row_tokens, *std::max_element(expect.begin(), expect.end()));
    QCOMPARE(r.mean_row_tokens, double(total) / 5.0);
    QCOMPARE(r.rows_over_seq, uint64_t(1));
    QCOMPARE(r.train_rows, uint64_t(3));
    QCOMPARE(r.val_rows, uint64_t(2));
    QCOMPARE(r.val_tokens, expect[3] + expect[4]);
    QCOMPARE(r.train_tokens, expect[0] + expect[1] + expect[2]);
  }

  void text_token_counts_and_split() {
    const std::string a = "The quick brown fox jumps over the lazy dog.\n", b = "Hello world.\n";
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "counts.txt", a + "\n" + b);
    o.val_fraction = 0.25;
    const engine::DatasetInspection r = engine::inspect_dataset(o, m_tok.get());
    const uint64_t na = m_tok->encode(a).size(), nb = m_tok->encode(b).size();
    QCOMPARE(r.rows, uint64_t(2));
    QCOMPARE(r.total_tokens, na + nb);
    QCOMPARE(r.min_row_tokens, std::min(na, nb));
    QCOMPARE(r.max_row_tokens, std::max(na, nb));
    QCOMPARE(r.val_tokens, uint64_t((na + nb) / 4));
    QCOMPARE(r.train_tokens + r.val_tokens, na + nb);
    QCOMPARE(r.rows_over_seq, uint64_t(0));  // a token stream has no rows to be too long
  }

  void progress_can_stop_the_count() {
    std::string text;
    for (int i = 0; i < 50; ++i) text += chat(std::string(size_t(i % 7 + 1), 'q'), std::string(size_t(i % 5 + 1), 'a'));
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "stop.jsonl", text);
    int calls = 0;
    bool inRange = true;
    const engine::DatasetInspection r = engine::inspect_dataset(o, m_tok.get(), [&](double f) {
      inRange = inRange && f >= 0.0 && f <= 1.0;
      return ++calls < 10;
    });
    QVERIFY(inRange);
    QCOMPARE(calls, 10);
    QVERIFY(!r.tokens_counted);
    QCOMPARE(r.rows, uint64_t(50));  // what was read before counting stays
  }
};

QTEST_GUILESS_MAIN(TestDatasetInspection)
#include "test_dataset_inspection.moc"
