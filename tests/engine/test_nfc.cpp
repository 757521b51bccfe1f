// Tests for the NFC normalizer (tokenizer/nfc.h) and the tokenizer.json that uses it (Qwen2).
//
// What is pinned down here:
//   * nfc() equals Python's unicodedata.normalize("NFC", s) (Unicode 16.0) on 1515 strings that
//     exercise decomposition, canonical reordering, blocked and Hangul composition, exclusions and
//     singletons (tests/data/tokenizer/nfc_cases.json, written by tests/tools/gen_nfc_tables.py);
//   * idempotence, ASCII passing through, invalid UTF-8 passing through byte for byte;
//   * the source map: one entry per output byte, pointing into the input;
//   * a Qwen2-style tokenizer.json with {"type": "NFC"} loads and encodes every case exactly as
//     Hugging Face tokenizers does (the same file and ids, from the same script).
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tokenizer.h"
#include "tokenizer/nfc.h"

using nlohmann::json;

namespace {

const std::string k_dir = std::string(WB_TEST_DATA_DIR) + "/tokenizer/";

json cases() {
  std::ifstream in(k_dir + "nfc_cases.json", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str()).at("cases");
}

}  // namespace

class TestNfc : public QObject {
  Q_OBJECT

 private slots:
  void matches_python_unicodedata() {
    int changed = 0;
    for (const json& c : cases()) {
      const std::string text = c.at("text"), expected = c.at("nfc");
      std::vector<std::size_t> source;
      const std::string got = engine::tokenizer::nfc(text, &source);
      if (got != expected)
        QFAIL(qPrintable(QString::fromStdString("nfc(" + json(text).dump() + ") = " + json(got).dump() + ", expected " +
                                                json(expected).dump())));
      QCOMPARE(engine::tokenizer::nfc(got), got);  // idempotent
      QCOMPARE(source.size(), got.size());
      for (std::size_t s : source) QVERIFY(s < text.size());
      changed += text != expected;
    }
    QVERIFY(changed > 500);  // the cases really exercise the algorithm
  }

  void passes_ascii_and_invalid_bytes_through() {
    QCOMPARE(engine::tokenizer::nfc("plain text"), std::string("plain text"));
    QCOMPARE(engine::tokenizer::nfc(""), std::string());
    // Invalid bytes stay, and block nothing they should not: "e\xff" + U+0301 keeps the mark apart.
    const std::string bad = std::string("a\xff") + "\xcc\x81" + "e\xcc\x81\xc3";
    QCOMPARE(engine::tokenizer::nfc(bad), std::string("a\xff") + "\xcc\x81" + "\xc3\xa9\xc3");
  }

  void qwen2_nfc_tokenizer_matches_tokenizers() {
    const auto tok = engine::Tokenizer::from_tokenizer_json(k_dir + "tiny_qwen2_nfc.json");
    int n = 0;
    for (const json& c : cases()) {
      const std::string text = c.at("text");
      const std::vector<int32_t> ids = tok->encode(text);
      if (ids != c.at("ids").get<std::vector<int32_t>>())
        QFAIL(qPrintable(QString::fromStdString("encode(" + json(text).dump() + ") differs from tokenizers")));
      QCOMPARE(tok->decode(ids), c.at("nfc").get<std::string>());
      // Offsets of the same encoding through encode_with_markup stay inside the text, non-decreasing.
      std::vector<std::size_t> offsets;
      QCOMPARE(tok->encode_with_markup(text, {}, &offsets), ids);
      QCOMPARE(offsets.size(), ids.size());
      for (std::size_t i = 0; i < offsets.size(); ++i) {
        QVERIFY(offsets[i] < text.size());
        if (i) QVERIFY(offsets[i] >= offsets[i - 1]);
      }
      ++n;
    }
    QCOMPARE(n, 1515);
    QVERIFY(tok->export_vocab().nfc);
  }
};

QTEST_GUILESS_MAIN(TestNfc)
#include "test_nfc.moc"
