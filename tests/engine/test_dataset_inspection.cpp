// The wizard's look at a data file before training (engine/train/dataset_inspection.h): format
// detection (plain text, JSONL chat messages, Alpaca, preference pairs, prompts with answers), the preview, every bad row with its line
// number (not only the first), token counts per row against an independent encode of each row, rows
// over the sequence length, the train/validation split as prepare_training_data makes it, and a stop
// from the progress callback.
#include <QTemporaryDir>
#include <QtTest>

#include <array>
#include <fstream>

#include "engine/align/prompt_data.h"
#include "engine/chat_template.h"
#include "engine/tokenizer.h"
#include "engine/train/preference_data.h"
#include "engine/train/dataset_inspection.h"
#include "support/data_files.h"
#include "support/error_of.h"

namespace {

std::string chat(const std::string& user, const std::string& assistant) {
  return R"({"messages":[{"role":"user","content":")" + user + R"("},{"role":"assistant","content":")" + assistant +
         "\"}]}\n";
}

std::string pair(const std::string& prompt, const std::string& chosen, const std::string& rejected) {
  return R"({"prompt":")" + prompt + R"(","chosen":")" + chosen + R"(","rejected":")" + rejected + "\"}\n";
}

std::string task(const std::string& prompt, const std::string& answer, const std::string& kind) {
  return R"({"prompt":")" + prompt + R"(","answer":")" + answer + R"(","kind":")" + kind + "\"}\n";
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
    QTest::newRow("preference pairs") << QByteArray((pair("p", "good", "bad") + pair("q", "yes", "no")).c_str())
                                      << "pairs" << 2;
    QTest::newRow("prompts") << QByteArray(task("What is 1 + 2?", "3", "arith").c_str()) << "prompts" << 1;
    // The first readable row decides: a broken first line does not turn pairs into chats.
    QTest::newRow("pairs after a bad line")
        << QByteArray(("{oops\n" + pair("p", "good", "bad")).c_str()) << "pairs" << 2;
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
    QCOMPARE(r.bad_rows, uint64_t(QString::fromLatin1(QTest::currentDataTag()).contains("bad line") ? 1 : 0));
    const engine::Recipe expected = format == "text"      ? engine::Recipe::Pretrain
                                    : format == "pairs"   ? engine::Recipe::Dpo
                                    : format == "prompts" ? engine::Recipe::Grpo
                                                          : engine::Recipe::Sft;
    QCOMPARE(r.recipe, expected);
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

  void bad_pairs_and_prompts_are_listed_with_their_lines() {
    const std::string pairs = pair("Say hi", "Hello!", "Go away.") +   // 1
                              R"({"prompt":"x","chosen":"same","rejected":"same"})"
                              "\n"                                  // 2 nothing to prefer
                              R"({"prompt":"x","chosen":"a"})"
                              "\n"                                  // 3 no rejected
                              + pair("Say bye", "Goodbye!", "No.");  // 4
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "pairs.jsonl", pairs);
    const engine::DatasetInspection r = engine::inspect_dataset(o, nullptr);
    QCOMPARE(r.format, std::string("pairs"));
    QCOMPARE(r.rows, uint64_t(4));
    QCOMPARE(r.bad_rows, uint64_t(2));
    QCOMPARE(r.problems.size(), size_t(2));
    QCOMPARE(r.problems[0].line, uint64_t(2));
    QVERIFY2(r.problems[0].message.find("the same reply") != std::string::npos, r.problems[0].message.c_str());
    QCOMPARE(r.problems[1].line, uint64_t(3));
    QVERIFY2(r.problems[1].message.find("no \"rejected\"") != std::string::npos, r.problems[1].message.c_str());
    QCOMPARE(r.preview.size(), size_t(2));
    QCOMPARE(r.preview[1].line, uint64_t(4));
    QCOMPARE(r.preview[1].messages[0].role, std::string("prompt"));
    QCOMPARE(r.preview[1].messages[0].content, std::string("Say bye"));
    QCOMPARE(r.preview[1].messages[1].content, std::string("Goodbye!"));
    QCOMPARE(r.preview[1].messages[2].role, std::string("rejected"));

    const std::string prompts = task("What is 2 + 2?", "4", "arith") +  // 1
                                task("What is 3 + 3?", "six", "arith") +  // 2 no number
                                "\n" +                                    // 3 blank
                                task("Where does Mia live?", "the red house", "facts") +  // 4
                                task("Sing", "la", "poetry");                              // 5 unknown kind
    o.path = write_file(m_dir, "prompts.jsonl", prompts);
    const engine::DatasetInspection p = engine::inspect_dataset(o, nullptr);
    QCOMPARE(p.format, std::string("prompts"));
    QCOMPARE(p.rows, uint64_t(4));
    QCOMPARE(p.bad_rows, uint64_t(2));
    QCOMPARE(p.problems[0].line, uint64_t(2));
    QVERIFY2(p.problems[0].message.find("must hold a number") != std::string::npos, p.problems[0].message.c_str());
    QCOMPARE(p.problems[1].line, uint64_t(5));
    QVERIFY2(p.problems[1].message.find("\"kind\"") != std::string::npos, p.problems[1].message.c_str());
    QCOMPARE(p.preview.size(), size_t(2));
    QCOMPARE(p.preview[1].line, uint64_t(4));
    QCOMPARE(p.preview[1].messages[1].content, std::string("the red house"));
    QCOMPARE(p.preview[1].messages[2].content, std::string("facts"));
  }

  void pair_token_counts_and_split() {
    const std::vector<std::array<std::string, 3>> rows = {{"Say hi", "Hello there, friend!", "No."},
                                                          {"Name a colour", "Blue.", "I will not answer that at all."},
                                                          {"Count to three", "One, two, three.", "Four."},
                                                          {"Greet me", "Good morning!", "Meh."}};
    std::string text;
    for (const auto& [p, c, r] : rows) text += pair(p, c, r);
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "pair_counts.jsonl", text);
    o.chat_template = *engine::ChatTemplate::from_name("chatml");
    o.val_fraction = 0.25;  // floor(4 * 0.25) = 1 pair: the last
    std::vector<uint64_t> expect;
    uint64_t longest_second = 0;
    for (const auto& [p, c, r] : rows) {
      const size_t nc = engine::encode_prompt_reply(*m_tok, o.chat_template, {{"user", p}}, c).ids.size();
      const size_t nr = engine::encode_prompt_reply(*m_tok, o.chat_template, {{"user", p}}, r).ids.size();
      expect.push_back(nc + nr);
      if (&p == &rows[1][0]) longest_second = std::max(nc, nr);
    }
    o.seq = int(longest_second) - 1;  // the second pair's longer sequence is over; check the others are not
    uint64_t over = 0;
    for (const auto& [p, c, r] : rows)
      over += std::max(engine::encode_prompt_reply(*m_tok, o.chat_template, {{"user", p}}, c).ids.size(),
                       engine::encode_prompt_reply(*m_tok, o.chat_template, {{"user", p}}, r).ids.size()) >
                      size_t(o.seq)
                  ? 1
                  : 0;
    const engine::DatasetInspection r = engine::inspect_dataset(o, m_tok.get());
    QVERIFY(r.tokens_counted);
    QCOMPARE(r.total_tokens, expect[0] + expect[1] + expect[2] + expect[3]);
    QCOMPARE(r.max_row_tokens, *std::max_element(expect.begin(), expect.end()));
    QCOMPARE(r.rows_over_seq, over);
    QVERIFY(over >= 1);
    QCOMPARE(r.train_rows, uint64_t(3));
    QCOMPARE(r.val_rows, uint64_t(1));
    QCOMPARE(r.val_tokens, expect[3]);
  }

  void prompt_counts_follow_the_training_split() {
    // Prompts too long for max_new_tokens within seq are skipped by training: the split is over the rest.
    const std::string long_prompt = "What is 1 + 1? Please think about it very carefully and take your time before "
                                    "you answer, because it matters a great deal to me and to everyone here.";
    std::string text = task("What is 1 + 1?", "2", "arith") + task(long_prompt, "2", "arith") +
                       task("What is 2 + 2?", "4", "arith") + task("What is 3 + 3?", "6", "arith") +
                       task("What is 4 + 4?", "8", "arith");
    engine::DatasetInspectionOptions o;
    o.path = write_file(m_dir, "prompt_counts.jsonl", text);
    o.chat_template = *engine::ChatTemplate::from_name("chatml");
    o.max_new_tokens = 8;
    const std::vector<engine::PromptItem> items = engine::parse_prompts_jsonl(text, "x");
    const engine::PromptSet set = engine::encode_prompts(items, *m_tok, o.chat_template);
    o.seq = int(set.ids[0].size()) + 8 + 1 + 4;  // room for the short prompts, not the long one
    QVERIFY(set.ids[1].size() + 8 + 1 > size_t(o.seq));
    o.val_fraction = 0.25;  // floor(4 kept * 0.25) = 1
    const engine::DatasetInspection r = engine::inspect_dataset(o, m_tok.get());
    QCOMPARE(r.rows, uint64_t(5));
    QCOMPARE(r.rows_over_seq, uint64_t(1));
    QCOMPARE(r.train_rows, uint64_t(3));
    QCOMPARE(r.val_rows, uint64_t(1));
    QCOMPARE(r.val_tokens, uint64_t(set.ids[4].size()));
    QCOMPARE(r.train_tokens, uint64_t(set.ids[0].size() + set.ids[2].size() + set.ids[3].size()));
    // The same split as training's own.
    const engine::PromptSplit split = engine::split_prompt_set(set, o.seq, 8, 0.25);
    QCOMPARE(split.skipped, size_t(1));
    QCOMPARE(split.val.items.size(), size_t(r.val_rows));
    QCOMPARE(split.val.items[0].answer, std::string("8"));
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
