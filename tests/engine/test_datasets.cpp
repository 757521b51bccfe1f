// Training data (engine/train/text_dataset.h, chat_dataset.h, sequence_loader.h, data_loader.h):
//   - the validation table: bad JSON, missing or unknown roles, empty content, no assistant turn, mixed
//     formats, empty file, invalid UTF-8 / UTF-16 -- each an engine::Error naming the file and line;
//   - the deterministic order of issue 5: with shuffle off, step k reads tokens [k*B*T, k*B*T + B*T] as
//     B rows of T inputs with targets shifted by one, wrapping when the next batch would pass the end;
//   - shuffled order: a permutation per epoch, reproducible from (seed, position), different per seed;
//   - SFT rows: loss only on assistant tokens, padding ignored, sequences with nothing to learn dropped.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <set>

#include "engine/chat_template.h"
#include "engine/tokenizer.h"
#include "engine/train/chat_dataset.h"
#include "engine/train/sequence_loader.h"
#include "engine/train/synth_stories.h"
#include "engine/train/text_dataset.h"
#include "support/data_files.h"
#include "support/error_of.h"

namespace {

std::vector<int32_t> iota_tokens(int n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = i;
  return v;
}

}  // namespace

class TestDatasets : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private slots:
  void chat_validation_table_data() {
    QTest::addColumn<QByteArray>("jsonl");
    QTest::addColumn<QString>("needle");
    const QByteArray ok = R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]})";
    QTest::newRow("empty file") << QByteArray() << "data.jsonl: the data file is empty";
    QTest::newRow("blank lines only") << QByteArray("\n  \n\t\n") << "the data file is empty";
    QTest::newRow("bad JSON") << (ok + "\n{\"messages\": [\n") << "data.jsonl: line 2: bad JSON";
    QTest::newRow("trailing comma") << (ok + "\n\n" + ok.left(ok.size() - 1) + ",}") << "line 3: bad JSON";
    QTest::newRow("not an object") << QByteArray("[1,2]") << "line 1: a row must be a JSON object";
    QTest::newRow("unknown shape") << QByteArray(R"({"text":"hi"})") << "line 1: neither a chat row";
    QTest::newRow("messages not array") << QByteArray(R"({"messages":"hi"})")
                                        << "line 1: \"messages\" must be an array";
    QTest::newRow("messages empty") << QByteArray(R"({"messages":[]})") << "line 1: \"messages\" is empty";
    QTest::newRow("message not object") << QByteArray(R"({"messages":["hi"]})")
                                        << "line 1: message 1 must be an object";
    QTest::newRow("missing role") << (ok + "\n" +
                                      R"({"messages":[{"content":"x"},{"role":"assistant","content":"y"}]})")
                                  << "line 2: message 1 has no \"role\"";
    QTest::newRow("unknown role") << QByteArray(
                                         R"({"messages":[{"role":"user","content":"x"},{"role":"bot","content":"y"}]})")
                                  << "line 1: message 2 has unknown role \"bot\"";
    QTest::newRow("role not string") << QByteArray(R"({"messages":[{"role":1,"content":"x"}]})")
                                     << "\"role\" must be a string";
    QTest::newRow("missing content") << QByteArray(
                                            R"({"messages":[{"role":"user"},{"role":"assistant","content":"y"}]})")
                                     << "line 1: message 1 has no \"content\" field";
    QTest::newRow("empty content")
        << QByteArray(R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"  "}]})")
        << "line 1: message 2 \"content\" is empty";
    QTest::newRow("content not string") << QByteArray(R"({"messages":[{"role":"user","content":["x"]}]})")
                                        << "\"content\" must be a string";
    QTest::newRow("no assistant")
        << QByteArray(R"({"messages":[{"role":"system","content":"s"},{"role":"user","content":"x"}]})")
        << "line 1: the conversation has no assistant message";
    QTest::newRow("mixed formats") << (ok + "\n" + R"({"instruction":"a","output":"b"})")
                                   << "line 2: the row has no \"messages\" field";
    QTest::newRow("alpaca no output") << QByteArray(R"({"instruction":"a","input":""})")
                                      << "line 1: the row has no \"output\" field";
    QTest::newRow("alpaca empty instruction")
        << QByteArray(R"({"instruction":"","output":"b"})") << "\"instruction\" is empty";
    QTest::newRow("alpaca input not string")
        << QByteArray(R"({"instruction":"a","input":3,"output":"b"})") << "\"input\" must be a string";
    QTest::newRow("invalid UTF-8") << (ok + "\n" + R"({"messages":[{"role":"user","content":"caf)" +
                                       QByteArray("\xE9") + R"("},{"role":"assistant","content":"y"}]})")
                                   << "line 2, byte 43: invalid UTF-8 (byte 0xE9)";
    QTest::newRow("UTF-16") << QByteArray("\xFF\xFE{\0\"\0", 6) << "UTF-16";
    QTest::newRow("duplicate key") << QByteArray(R"({"messages":[{"role":"user","role":"assistant","content":"x"}]})")
                                   << "line 1: bad JSON";
    QTest::newRow("NaN literal") << QByteArray(R"({"instruction":"a","output":"b","score":NaN})") << "line 1: bad JSON";
  }
  void chat_validation_table() {
    QFETCH(QByteArray, jsonl);
    QFETCH(QString, needle);
    const std::string path = write_file(m_dir, "data.jsonl", jsonl.toStdString());
    const QString e = error_of([&] { engine::load_chat_dataset(path); });
    QVERIFY2(e.contains(needle) && e.contains(QString::fromStdString(path)), qPrintable(e));
  }

  void chat_formats_parse() {
    const std::string msgs =
        "\xEF\xBB\xBF"  // a BOM is accepted
        R"({"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"}],"id":7})"
        "\n\n"
        R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"bye"},{"role":"assistant","content":"ciao"}]})"
        "\r\n";
    const engine::ChatDataset d = engine::parse_chat_jsonl(msgs, "m.jsonl");
    QCOMPARE(d.format, engine::ChatDataFormat::Messages);
    QCOMPARE(d.examples.size(), size_t(2));
    QCOMPARE(d.examples[0].messages.size(), size_t(3));
    QCOMPARE(d.examples[0].messages[2].content, std::string("4"));
    QCOMPARE(d.examples[1].line, uint64_t(3));
    QCOMPARE(d.examples[1].messages[3].role, std::string("assistant"));

    const std::string alpaca = R"({"instruction":"Add.","input":"2 and 3","output":"5"})"
                               "\n"
                               R"({"instruction":"Greet.","input":"","output":"Hello!"})"
                               "\n"
                               R"({"instruction":"Name a colour.","output":"Blue"})";
    const engine::ChatDataset a = engine::parse_chat_jsonl(alpaca, "a.jsonl");
    QCOMPARE(a.format, engine::ChatDataFormat::Alpaca);
    QCOMPARE(a.examples.size(), size_t(3));
    QCOMPARE(a.examples[0].messages[0].content, std::string("Add.\n\n2 and 3"));
    QCOMPARE(a.examples[1].messages[0].content, std::string("Greet."));
    QCOMPARE(a.examples[2].messages[1].role, std::string("assistant"));
    QCOMPARE(a.examples[2].messages[1].content, std::string("Blue"));
  }

  void text_dataset_tokenizes_and_splits() {
    const auto tok = gpt2();
    std::string text;
    for (int i = 0; i < 40; ++i) text += "The cat sat on the mat number " + std::to_string(i) + ".\n";
    const std::string path = write_file(m_dir, "t.txt", text);
    const engine::TextDataset d = engine::load_text_dataset(path, *tok, 0.25);
    std::vector<int32_t> all = d.train;
    all.insert(all.end(), d.val.begin(), d.val.end());
    QCOMPARE(all, tok->encode(text));  // the split loses and reorders nothing
    QCOMPARE(d.val.size(), size_t(std::floor(all.size() * 0.25)));
    QVERIFY(engine::load_text_dataset(path, *tok, 0.0).val.empty());
  }

  void text_dataset_errors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("needle");
    QTest::newRow("empty") << QByteArray() << "the data file is empty";
    QTest::newRow("whitespace") << QByteArray(" \n\n  ") << "the data file is empty";
    QTest::newRow("latin-1") << QByteArray("line one\nna\xEFve\n") << "line 2, byte 3: invalid UTF-8 (byte 0xEF)";
    QTest::newRow("utf-16") << QByteArray("\xFE\xFF\0h\0i", 6) << "UTF-16";
    QTest::newRow("truncated char") << QByteArray("ok\xE2\x82") << "line 1, byte 3: invalid UTF-8";
  }
  void text_dataset_errors() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, needle);
    const auto tok = gpt2();
    const std::string path = write_file(m_dir, "bad.txt", bytes.toStdString());
    const QString e = error_of([&] { engine::load_text_dataset(path, *tok, 0.1); });
    QVERIFY2(e.contains(needle) && e.contains(QString::fromStdString(path)), qPrintable(e));
    QVERIFY(error_of([&] {
              engine::load_text_dataset(m_dir.filePath("missing.txt").toStdString(), *tok, 0.1);
            }).contains("cannot open"));
    QVERIFY(error_of([&] {
              engine::load_chat_dataset(m_dir.filePath("missing.jsonl").toStdString());
            }).contains("cannot open"));
  }

  void deterministic_order_reads_consecutive_tokens_and_wraps() {
    // 103 tokens, B=2, T=8: batches start at 0, 16, 32, 48, 64, 80; the next (96) would need tokens up to
    // 112 > 102, so the loader wraps to 0.
    const int B = 2, T = 8, N = 103;
    engine::TokenStreamLoader loader(iota_tokens(N), B, T, /*shuffle=*/false, 1, "s");
    engine::Batch batch;
    for (int k = 0; k < 14; ++k) {
      const int start = (k % 6) * B * T;
      loader.next(batch);
      QCOMPARE(batch.B, B);
      QCOMPARE(batch.T, T);
      QVERIFY(batch.weights.empty());
      for (int i = 0; i < B * T; ++i) {
        QCOMPARE(batch.inputs[size_t(i)], start + i);
        QCOMPARE(batch.targets[size_t(i)], start + i + 1);
      }
      QCOMPARE(loader.position().epoch, uint64_t((k + 1) / 6));
    }
    // Exactly B*T + 1 tokens: every step reads the same batch.
    engine::TokenStreamLoader exact(iota_tokens(B * T + 1), B, T, false, 1, "s");
    exact.next(batch);
    exact.next(batch);
    QCOMPARE(batch.targets.back(), B * T);
    QVERIFY(error_of([&] {
              engine::TokenStreamLoader(iota_tokens(B * T), B, T, false, 1, "small.txt");
            }).contains("small.txt: 16 tokens cannot fill one batch of 2 x 8 (needs 17)"));
  }

  void shuffled_order_is_a_seeded_permutation() {
    const int B = 3, T = 4, N = 4 * 30 + 1;  // 30 windows: 10 batches per epoch
    engine::TokenStreamLoader a(iota_tokens(N), B, T, true, 42, "s"), b(iota_tokens(N), B, T, true, 42, "s"),
        c(iota_tokens(N), B, T, true, 43, "s");
    engine::Batch ba, bb, bc;
    std::set<int> starts;
    bool differs_from_c = false;
    std::vector<int> epoch0, epoch1;
    for (int k = 0; k < 20; ++k) {
      a.next(ba);
      b.next(bb);
      c.next(bc);
      QCOMPARE(ba.inputs, bb.inputs);
      differs_from_c = differs_from_c || ba.inputs != bc.inputs;
      for (int r = 0; r < B; ++r) {
        const int s = ba.inputs[size_t(r * T)];
        QCOMPARE(s % T, 0);  // windows start at multiples of T
        for (int t = 0; t < T; ++t) {
          QCOMPARE(ba.inputs[size_t(r * T + t)], s + t);
          QCOMPARE(ba.targets[size_t(r * T + t)], s + t + 1);
        }
        (k < 10 ? epoch0 : epoch1).push_back(s);
      }
    }
    QVERIFY(differs_from_c);
    // Each epoch visits every window exactly once, in a different order.
    std::vector<int> sorted0 = epoch0, sorted1 = epoch1;
    std::sort(sorted0.begin(), sorted0.end());
    std::sort(sorted1.begin(), sorted1.end());
    QCOMPARE(sorted0, sorted1);
    QCOMPARE(std::set<int>(sorted0.begin(), sorted0.end()).size(), size_t(30));
    QVERIFY(epoch0 != epoch1);
  }

  void seek_continues_the_same_sequence() {
    for (bool shuffle : {false, true}) {
      engine::TokenStreamLoader a(iota_tokens(500), 2, 7, shuffle, 9, "s");
      engine::Batch ba, bb;
      for (int k = 0; k < 13; ++k) a.next(ba);
      engine::TokenStreamLoader b(iota_tokens(500), 2, 7, shuffle, 9, "s");
      b.seek(a.position());
      for (int k = 0; k < 40; ++k) {
        a.next(ba);
        b.next(bb);
        QCOMPARE(bb.inputs, ba.inputs);
        QCOMPARE(bb.targets, ba.targets);
      }
      QVERIFY(error_of([&] { b.seek(engine::DataPosition{0, 100000}); }).contains("outside this data set"));
    }
  }

  void sequence_rows_mask_all_but_assistant_tokens() {
    // ids 10..15, the assistant's are 13, 14 (mask 1) and 15 (end of turn).
    std::vector<engine::EncodedChat> seqs = {
        {{10, 11, 12, 13, 14, 15}, {0, 0, 0, 1, 1, 1}},
        {{20, 21, 22}, {0, 0, 1}},
        {{30, 31, 32, 33, 34, 35, 36, 37, 38}, {0, 0, 0, 0, 0, 0, 0, 1, 1}},  // assistant part beyond T+1: dropped
    };
    engine::SequenceLoader loader(seqs, 2, 5, false, 0, /*pad_id=*/0, "c.jsonl");
    QCOMPARE(loader.size(), size_t(2));
    QCOMPARE(loader.dropped(), size_t(1));
    engine::Batch b;
    loader.next(b);
    const std::vector<int32_t> in = {10, 11, 12, 13, 14, /**/ 20, 21, 0, 0, 0};
    const std::vector<int32_t> tg = {-1, -1, 13, 14, 15, /**/ -1, 22, -1, -1, -1};
    QCOMPARE(b.inputs, in);
    QCOMPARE(b.targets, tg);
    QCOMPARE(b.counted_positions(), int64_t(4));
    // In order, the second batch starts again (2 sequences, B = 2).
    loader.next(b);
    QCOMPARE(b.inputs, in);
    QCOMPARE(loader.position().epoch, uint64_t(2));
    QVERIFY(error_of([&] {
              engine::SequenceLoader({{{1, 2}, {0, 0}}}, 1, 4, false, 0, 0, "c.jsonl");
            }).contains("no conversation has an assistant token"));
    QVERIFY(error_of([&] {
              engine::SequenceLoader(seqs, 3, 5, false, 0, 0, "c.jsonl");
            }).contains("2 items cannot fill one batch of 3"));
  }

  void sft_batches_teach_only_the_assistant_turns() {
    // Parse -> render with ChatML -> encode -> batch: the targets that count decode to exactly the
    // assistant's words and the end-of-turn markup after them, never the system or user text.
    const auto tok = gpt2();
    const engine::ChatDataset d = engine::parse_chat_jsonl(
        R"({"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"What is two plus two?"},)"
        R"({"role":"assistant","content":"It is four."},{"role":"user","content":"And three?"},)"
        R"({"role":"assistant","content":"Six."}]})",
        "c.jsonl");
    const auto enc = engine::encode_chat_dataset(d, *tok, *engine::ChatTemplate::from_name("chatml"));
    QCOMPARE(enc.size(), size_t(1));
    const int T = int(enc[0].ids.size()) + 5;  // room to spare: the row ends in padding
    engine::SequenceLoader loader(enc, 1, T, false, 0, 0, "c.jsonl");
    engine::Batch b;
    loader.next(b);
    std::vector<int32_t> counted;
    for (int32_t t : b.targets)
      if (t >= 0) counted.push_back(t);
    QCOMPARE(QString::fromStdString(tok->decode(counted)), QString("It is four.<|im_end|>Six.<|im_end|>"));
    QCOMPARE(b.inputs[size_t(T - 1)], 0);  // padding
  }

  void synthetic_stories() {
    const std::string a = engine::synth_stories(200, 7);
    QCOMPARE(engine::synth_stories(200, 7), a);  // a pure function of (n, seed)
    QVERIFY(engine::synth_stories(200, 8) != a);
    QVERIFY(engine::synth_stories(0, 7).empty());
    QVERIFY(std::all_of(a.begin(), a.end(), [](char ch) { return ch == '\n' || (ch >= 32 && ch < 127); }));
    // 200 stories, one blank line between each, none inside; pronouns agree within a story.
    std::vector<std::string> stories;
    size_t pos = 0;
    while (pos < a.size()) {
      size_t end = a.find("\n\n", pos);
      if (end == std::string::npos) end = a.size() - 1;  // the final newline
      stories.push_back(a.substr(pos, end - pos));
      pos = end + 2;
    }
    QCOMPARE(stories.size(), size_t(200));
    std::set<std::string> distinct;
    for (const std::string& s : stories) {
      QVERIFY(!s.empty() && s.find('\n') == std::string::npos);
      const bool she = s.find("She ") != std::string::npos || s.find(" she ") != std::string::npos;
      const bool he = s.find("He ") != std::string::npos || s.find(" he ") != std::string::npos;
      QVERIFY2(she != he, s.c_str());
      distinct.insert(s);
    }
    QVERIFY(distinct.size() > 190);  // varied, not one story repeated
  }

  void permutation_is_uniform_enough_and_portable() {
    // Pinned values: the generator is ours (splitmix64), so this sequence must never change between
    // platforms or standard libraries -- a changed order would break resuming old checkpoints.
    uint64_t s = 0;
    QCOMPARE(engine::splitmix64_next(s), 0xE220A8397B1DCDAFull);  // splitmix64's published first output for seed 0
    QCOMPARE(engine::splitmix64_next(s), 0x6E789E6AA1B965F4ull);
    // Every position equally likely: 3 items, 6000 epochs, each permutation ~1000 times.
    std::map<std::vector<uint32_t>, int> counts;
    for (uint64_t e = 0; e < 6000; ++e) ++counts[engine::epoch_permutation(3, 5, e)];
    QCOMPARE(counts.size(), size_t(6));
    for (const auto& [p, n] : counts) QVERIFY2(n > 850 && n < 1150, qPrintable(QString::number(n)));
  }
};

QTEST_MAIN(TestDatasets)
#include "test_datasets.moc"
