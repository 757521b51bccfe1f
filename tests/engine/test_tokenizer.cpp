// Tests for the byte-level BPE tokenizer (engine/tokenizer.h).
//
// What is pinned down here:
//   * exact agreement with the reference (HF tokenizers) on the fixture texts, for the GPT-2 files,
//     for tokenizer.json built from the same files (both merge spellings), and for a small real
//     tokenizer.json saved by HF (tests/tools/make_tokenizer_fixture.py makes both fixtures);
//   * totality: any byte string, including invalid UTF-8, encodes without throwing and decodes back
//     to the same bytes; every vocabulary token decodes to its bytes and re-encodes losslessly;
//   * special tokens are matched only with allow_special;
//   * pathological lengths stay fast (heap-based merging, linear pre-tokenizer);
//   * every malformed file in the table ends in engine::Error, never a crash (run under ASan too).
#include <QElapsedTimer>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

using engine::Tokenizer;
using nlohmann::json;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string k_data = WB_TEST_DATA_DIR;
// The shipped copy of the GPT-2 files (resources/tokenizers/gpt2, MIT licence: see its README.md).
const std::string k_vocab_path = std::string(WB_TEST_DATA_DIR) + "/../../resources/tokenizers/gpt2/vocab.json";
const std::string k_merges_path = std::string(WB_TEST_DATA_DIR) + "/../../resources/tokenizers/gpt2/merges.txt";
constexpr int32_t k_eot = 50256;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Row {
  std::string text;
  bool allow_special;
  std::vector<int32_t> ids;
};

std::vector<Row> fixture_rows(const char* key) {
  const json f = json::parse(read_file(k_data + "/tokenizer/gpt2_encodings.json"));
  std::vector<Row> rows;
  for (const json& r : f.at(key)) rows.push_back({r.at("text"), r.at("allow_special"), r.at("ids")});
  return rows;
}

// JSON-quoted, with invalid UTF-8 replaced, for messages.
std::string printable(const std::string& s) { return json(s).dump(-1, ' ', true, json::error_handler_t::replace); }

bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = engine::tokenizer::decode_utf8(p + i, s.size() - i);
    if (c.code_point == engine::tokenizer::k_invalid_code_point) return false;
    i += c.length;
  }
  return true;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

// Compares every fixture row; reports the first few mismatches by text.
void check_rows(const Tokenizer& tok, const std::vector<Row>& rows, bool check_decode) {
  int failures = 0;
  for (const Row& r : rows) {
    const std::vector<int32_t> got = tok.encode(r.text, r.allow_special);
    if (got != r.ids && ++failures <= 5)
      qWarning("mismatch for %s (allow_special=%d):\n  got  %s\n  want %s", printable(r.text).c_str(),
               int(r.allow_special), show(got).c_str(), show(r.ids).c_str());
    if (check_decode && tok.decode(got) != r.text && ++failures <= 5)
      qWarning("decode mismatch for %s", printable(r.text).c_str());
  }
  QCOMPARE(failures, 0);
}

// The GPT-2 files rewritten as an HF tokenizer.json (optionally with pair-style merges and the
// ByteLevel pre-tokenizer inside a Sequence, as newer HF versions write them).
std::string gpt2_as_tokenizer_json(bool pair_merges, bool sequence) {
  json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", ""},
                {"end_of_word_suffix", ""},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false}};
  model["vocab"] = json::parse(read_file(k_vocab_path));
  json merges = json::array();
  std::istringstream lines(read_file(k_merges_path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.starts_with("#version")) continue;
    if (pair_merges) {
      const auto sp = line.find(' ');
      merges.push_back(json::array({line.substr(0, sp), line.substr(sp + 1)}));
    } else {
      merges.push_back(line);
    }
  }
  model["merges"] = merges;
  json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  json root = {{"version", "1.0"},      {"truncation", nullptr},        {"padding", nullptr},
               {"normalizer", nullptr}, {"post_processor", byte_level}, {"decoder", byte_level}};
  root["added_tokens"] = json::array({{{"id", k_eot},
                                       {"content", "<|endoftext|>"},
                                       {"single_word", false},
                                       {"lstrip", false},
                                       {"rstrip", false},
                                       {"normalized", true},
                                       {"special", true}}});
  root["pre_tokenizer"] =
      sequence ? json{{"type", "Sequence"}, {"pretokenizers", json::array({byte_level})}} : byte_level;
  root["model"] = model;
  return root.dump();
}

// Runs `fn`, expecting engine::Error; returns its message ("" and a test failure otherwise).
template <typename Fn>
std::string expect_error(Fn&& fn) {
  try {
    fn();
  } catch (const engine::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    qWarning("threw a non-engine exception: %s", e.what());
    return "";
  }
  qWarning("did not throw");
  return "";
}

// A small valid vocabulary and merges that the corrupt-file cases below change one thing in.
const char* const k_small_vocab = R"({"a":0,"b":1,"ab":2,"c":3,"\u0120":4,"\u0120a":5})";
const char* const k_small_merges = "#version: 0.2\na b\n\u0120 a\n";

json small_tokenizer_json() {
  json bl = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  return json{{"version", "1.0"},
              {"added_tokens", json::array({{{"id", 6}, {"content", "<|endoftext|>"}, {"special", true}}})},
              {"normalizer", nullptr},
              {"pre_tokenizer", bl},
              {"post_processor", nullptr},
              {"decoder", bl},
              {"model",
               {{"type", "BPE"}, {"vocab", json::parse(k_small_vocab)}, {"merges", json::array({"a b", "\u0120 a"})}}}};
}

}  // namespace

class TestTokenizer : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<Tokenizer> m_gpt2;

 private slots:
  void initTestCase() { m_gpt2 = Tokenizer::from_gpt2_files(k_vocab_path, k_merges_path); }

  void gpt2_basics() {
    QCOMPARE(m_gpt2->vocab_size(), 50257);
    QCOMPARE(m_gpt2->eos_id(), std::optional<int32_t>(k_eot));
    QCOMPARE(m_gpt2->bos_id(), std::optional<int32_t>(k_eot));
    QCOMPARE(m_gpt2->token_id("<|endoftext|>"), std::optional<int32_t>(k_eot));
    QCOMPARE(m_gpt2->token_id("\u0120the"), std::optional<int32_t>(262));
    QCOMPARE(m_gpt2->token_piece(262), std::string("\u0120the"));
    QCOMPARE(m_gpt2->token_bytes(262), std::string(" the"));
    QCOMPARE(m_gpt2->token_bytes(k_eot), std::string("<|endoftext|>"));
    QCOMPARE(m_gpt2->token_bytes(-1), std::string());
    QCOMPARE(m_gpt2->token_bytes(50257), std::string());
    QCOMPARE(m_gpt2->token_piece(1 << 30), std::string());
    QVERIFY(!m_gpt2->token_id("no such piece"));
    QCOMPARE(m_gpt2->encode("Hello world"), (std::vector<int32_t>{15496, 995}));
    QCOMPARE(m_gpt2->encode(""), std::vector<int32_t>{});
    const std::vector<int32_t> with_bad_ids{15496, -5, 50257, 995, 1 << 30};
    QCOMPARE(m_gpt2->decode(with_bad_ids), std::string("Hello world"));  // unknown ids are skipped
  }

  void gpt2_matches_reference() { check_rows(*m_gpt2, fixture_rows("gpt2"), /*check_decode=*/true); }

  void tokenizer_json_matches_reference_data() {
    QTest::addColumn<bool>("pair_merges");
    QTest::addColumn<bool>("sequence");
    QTest::newRow("string merges, ByteLevel") << false << false;
    QTest::newRow("pair merges, Sequence[ByteLevel]") << true << true;
  }
  void tokenizer_json_matches_reference() {
    QFETCH(bool, pair_merges);
    QFETCH(bool, sequence);
    const auto tok = Tokenizer::from_tokenizer_json_string(gpt2_as_tokenizer_json(pair_merges, sequence));
    QCOMPARE(tok->vocab_size(), 50257);
    QCOMPARE(tok->eos_id(), std::optional<int32_t>(k_eot));
    check_rows(*tok, fixture_rows("gpt2"), true);
  }

  void hf_saved_tokenizer_json_matches_reference() {
    // Trained and saved by HF itself: add_prefix_space, special and non-special added tokens.
    const auto tok = Tokenizer::from_tokenizer_json(k_data + "/tokenizer/tiny_bytelevel.json");
    QCOMPARE(tok->token_id("hello world"), std::optional<int32_t>(600));
    QCOMPARE(tok->eos_id(), std::optional<int32_t>(0));  // its <|endoftext|>
    // add_prefix_space adds a space per segment, so decode(encode(x)) != x here by design.
    check_rows(*tok, fixture_rows("tiny"), /*check_decode=*/false);
  }

  void special_tokens() {
    const std::string text = "a<|endoftext|>b";
    const std::vector<int32_t> on = m_gpt2->encode(text, true);
    const std::vector<int32_t> off = m_gpt2->encode(text, false);
    QCOMPARE(on, (std::vector<int32_t>{64, k_eot, 65}));
    QVERIFY(std::find(off.begin(), off.end(), k_eot) == off.end());
    QCOMPARE(m_gpt2->decode(on), text);
    QCOMPARE(m_gpt2->decode(off), text);
    QCOMPARE(m_gpt2->encode("<|endoftext|>", true), std::vector<int32_t>{k_eot});
    // Near misses never become the control token.
    for (const char* s : {"<|endoftext|", "<|endoftext >", "<|endoftext\xE2\x80\x8D|>", "<|endoftextt|>", "50256"}) {
      const std::vector<int32_t> ids = m_gpt2->encode(s, true);
      QVERIFY2(std::find(ids.begin(), ids.end(), k_eot) == ids.end(), s);
      QCOMPARE(m_gpt2->decode(ids), std::string(s));
    }
  }

  void pre_tokenizer_splits() {
    const auto pre = engine::tokenizer::make_gpt2_pre_tokenizer();
    auto split = [&](std::string_view s) {
      std::vector<std::string_view> v;
      pre->split(s, v);
      return std::vector<std::string>(v.begin(), v.end());
    };
    using V = std::vector<std::string>;
    QCOMPARE(split("a   b"), (V{"a", "  ", " b"}));
    QCOMPARE(split("a\t\tb"), (V{"a", "\t", "\t", "b"}));
    QCOMPARE(split("end   "), (V{"end", "   "}));
    QCOMPARE(split("I'm it's"), (V{"I", "'m", " it", "'s"}));
    QCOMPARE(split("''s"), (V{"''", "s"}));
    QCOMPARE(split(" 's"), (V{" '", "s"}));
    QCOMPARE(split("x 123 ?!"), (V{"x", " 123", " ?!"}));
    QCOMPARE(split("a\xFF\xFE b"), (V{"a", "\xFF\xFE", " b"}));  // invalid bytes group as "other"
    QCOMPARE(split("\xE3\x80\x80\xE3\x80\x80x"), (V{"\xE3\x80\x80", "\xE3\x80\x80", "x"}));  // U+3000 is \s
    // Concatenation invariant on random bytes.
    std::mt19937 rng(123);
    for (int i = 0; i < 2000; ++i) {
      std::string s(rng() % 40, '\0');
      static constexpr char k_alphabet[] = " a1'\t\n\xC3\xA9\xE2\x80\x80\xFF";
      for (char& c : s) c = k_alphabet[rng() % (sizeof k_alphabet - 1)];
      std::vector<std::string_view> v;
      pre->split(s, v);
      std::string joined;
      for (auto p : v) {
        QVERIFY(!p.empty());
        joined += p;
      }
      QCOMPARE(joined, s);
    }
  }

  void random_bytes_round_trip() {
    std::mt19937_64 rng(20240601);
    // Every single byte, and the malformed sequences of reliability.md §2.3.
    std::vector<std::string> cases;
    for (int b = 0; b < 256; ++b) cases.emplace_back(1, static_cast<char>(b));
    for (const char* s : {"\xE2\x80", "\xF0\x9F\x98", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF5\x80\x80\x80",
                          "\xFF\xFE", "\x80", "\xEF\xBB\xBF//", "a\0b", "\xF4\x90\x80\x80", "x\xE2\x80 y"})
      cases.emplace_back(s);
    cases.emplace_back(std::string("nul\0inside", 10));
    static constexpr char k_structured[] = " \t\n'sa1<|>\xC3\xA9\xF0\x9F\0";
    for (int i = 0; i < 3000; ++i) {
      std::string s(rng() % 64, '\0');
      const int mode = i % 3;
      for (char& c : s) {
        if (mode == 0) c = static_cast<char>(rng());                     // any byte
        else if (mode == 1) c = static_cast<char>(0x80 + rng() % 0x80);  // high bytes only
        else c = k_structured[rng() % (sizeof k_structured - 1)];        // structure-heavy
      }
      cases.push_back(std::move(s));
    }
    for (const std::string& s : cases) {
      for (bool allow : {false, true}) {
        const std::vector<int32_t> ids = m_gpt2->encode(s, allow);
        if (m_gpt2->decode(ids) != s) QFAIL(("round trip failed for " + printable(s)).c_str());
      }
    }
  }

  void every_vocab_token() {
    // Each token decodes to its bytes, its piece looks it up again, and encoding its bytes gives
    // those bytes back. Re-encoding to the single id holds for every token whose bytes are valid
    // UTF-8 (HF tokenizers agrees: it round-trips all of those too). The 17 GPT-2 tokens that end
    // inside a multi-byte character cannot: their stray bytes are split off as "other" characters.
    int single = 0;
    std::vector<int32_t> not_single;
    for (int32_t id = 0; id < m_gpt2->vocab_size(); ++id) {
      const std::string bytes = m_gpt2->token_bytes(id);
      QVERIFY(!bytes.empty());
      const int32_t one[] = {id};
      QCOMPARE(m_gpt2->decode(one), bytes);
      QCOMPARE(m_gpt2->token_id(m_gpt2->token_piece(id)), std::optional<int32_t>(id));
      const std::vector<int32_t> ids = m_gpt2->encode(bytes, /*allow_special=*/true);
      QCOMPARE(m_gpt2->decode(ids), bytes);
      if (ids.size() == 1 && ids[0] == id) {
        ++single;
      } else {
        QVERIFY2(!valid_utf8(bytes), ("valid UTF-8 token does not re-encode to itself: " + std::to_string(id)).c_str());
        not_single.push_back(id);
      }
    }
    qInfo("%d of %d GPT-2 tokens re-encode to themselves", single, m_gpt2->vocab_size());
    QCOMPARE(not_single, (std::vector<int32_t>{12045, 15474, 17683, 19049, 20174, 22757, 25443, 27032, 33426, 33434,
                                               33951, 34247, 34504, 39374, 39820, 47703, 49149}));
  }

  void long_inputs_data() {
    QTest::addColumn<std::string>("unit");
    QTest::newRow("a") << std::string("a");
    QTest::newRow("underscore") << std::string("_");
    QTest::newRow("space") << std::string(" ");
    QTest::newRow("newline") << std::string("\n");
    QTest::newRow("CJK") << std::string("\xE4\xB8\xAD");
    QTest::newRow("emoji") << std::string("\xF0\x9F\x98\x80");
    QTest::newRow("word+space") << std::string("hello ");
    QTest::newRow("digits") << std::string("7");
    QTest::newRow("invalid byte") << std::string("\xFF");
  }
  void long_inputs() {
    // 1 MiB of one unit: a single pre-token of ~1M bytes for most rows, the worst case for merging.
    QFETCH(std::string, unit);
    std::string text;
    while (text.size() < (1u << 20)) text += unit;
    QElapsedTimer timer;
    timer.start();
    const std::vector<int32_t> ids = m_gpt2->encode(text);
    const qint64 ms = timer.elapsed();
    qInfo("1 MiB of %s: %zu tokens in %lld ms", printable(unit).c_str(), ids.size(), ms);
    QVERIFY(!ids.empty());
    QCOMPARE(m_gpt2->decode(ids), text);
    QVERIFY2(ms < 5000, "encoding 1 MiB took longer than 5 s");
  }

  void long_random_letters() {
    std::mt19937 rng(5);
    std::string text(1u << 20, 'a');
    for (char& c : text) c = static_cast<char>('a' + rng() % 26);
    QElapsedTimer timer;
    timer.start();
    const std::vector<int32_t> ids = m_gpt2->encode(text);
    qInfo("1 MiB of random letters: %zu tokens in %lld ms", ids.size(), timer.elapsed());
    QCOMPARE(m_gpt2->decode(ids), text);
    QVERIFY(timer.elapsed() < 5000);
  }

  void concurrent_encode() {
    // Const encode() from several threads at once (shared word cache) gives the same ids as serial.
    const std::vector<Row> rows = fixture_rows("gpt2");
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 5; ++rep)
          for (std::size_t i = (t + rep) % rows.size(), n = 0; n < rows.size(); ++n, i = (i + 1) % rows.size())
            if (m_gpt2->encode(rows[i].text, rows[i].allow_special) != rows[i].ids) ++failures;
      });
    }
    for (auto& th : threads) th.join();
    QCOMPARE(failures.load(), 0);
  }

  void accepted_file_quirks_data() {
    QTest::addColumn<std::string>("vocab");
    QTest::addColumn<std::string>("merges");
    const std::string v = k_small_vocab;
    QTest::newRow("plain") << v << std::string(k_small_merges);
    QTest::newRow("no #version") << v << std::string("a b\n\u0120 a\n");
    QTest::newRow("CRLF") << v << std::string("#version: 0.2\r\na b\r\n\u0120 a\r\n");
    QTest::newRow("BOM in merges") << v << std::string("\xEF\xBB\xBF#version: 0.2\na b\n\u0120 a");
    QTest::newRow("BOM in vocab") << ("\xEF\xBB\xBF" + v) << std::string(k_small_merges);
    QTest::newRow("blank lines, no final newline") << v << std::string("a b\n\n\u0120 a");
    QTest::newRow("id gap") << std::string(R"({"a":0,"b":1,"ab":2,"c":3,"\u0120":4,"\u0120a":900})")
                            << std::string(k_small_merges);
  }
  void accepted_file_quirks() {
    QFETCH(std::string, vocab);
    QFETCH(std::string, merges);
    const auto tok = Tokenizer::from_gpt2_strings(vocab, merges);
    const std::vector<int32_t> ids = tok->encode("ab a");
    QCOMPARE(ids.size(), std::size_t(2));
    QCOMPARE(ids[0], 2);
    QCOMPARE(tok->token_piece(ids[1]), std::string("\u0120a"));
    QVERIFY(!tok->eos_id());
  }

  void corrupt_gpt2_files_data() {
    QTest::addColumn<std::string>("vocab");
    QTest::addColumn<std::string>("merges");
    QTest::addColumn<std::string>("expected");  // substring of the error message
    const std::string v = k_small_vocab;
    const std::string m = k_small_merges;
    auto row = [](const char* name, std::string vocab, std::string merges, std::string expected) {
      QTest::newRow(name) << std::move(vocab) << std::move(merges) << std::move(expected);
    };
    row("empty vocab file", "", m, "vocab.json: file is empty");
    row("whitespace vocab file", " \n\t", m, "file is empty");
    row("truncated JSON", R"({"a":0,"b")", m, "invalid JSON");
    row("not JSON", "hello", m, "invalid JSON");
    row("trailing garbage", v + "x", m, "invalid JSON");
    row("array instead of object", "[1,2]", m, "expected an object");
    row("empty object", "{}", m, "vocabulary is empty");
    row("deep arrays", std::string(100000, '[') + std::string(100000, ']'), m, "nesting deeper than 64");
    std::string deep_obj;
    for (int i = 0; i < 200; ++i) deep_obj += "{\"a\":";
    deep_obj += '0';
    deep_obj.append(200, '}');
    row("deep objects", deep_obj, m, "nesting deeper than 64");
    row("id is a string", R"({"a":"0"})", m, "expected an integer token id, got a string");
    row("id is a float", R"({"a":0.5})", m, "got a non-integer number");
    row("id is null", R"({"a":null})", m, "got null");
    row("id is an array", R"({"a":[0]})", m, "got an array");
    row("id is a bool", R"({"a":true})", m, "got a boolean");
    row("negative id", R"({"a":-1})", m, "outside [0, 2^31 - 1)");
    row("id 2^31", R"({"a":2147483648})", m, "outside [0, 2^31 - 1)");
    row("id 2^31-1", R"({"a":2147483647})", m, "outside [0, 2^31 - 1)");
    row("id 2^64-1", R"({"a":18446744073709551615})", m, "out of range");
    row("id 1e400", R"({"a":1e400})", m, "vocab.json");
    row("NaN literal", R"({"a":NaN})", m, "invalid JSON");
    row("duplicate token", R"({"a":0,"b":1,"a":2})", m, "duplicate key 'a'");
    row("duplicate id", R"({"a":0,"b":0})", m, "id 0 is given to two tokens");
    row("sparse ids", R"({"a":0,"b":2000000000})", m, "unused ids");
    row("invalid UTF-8 token", "{\"\xFF\":0}", m, "invalid UTF-8 at byte");
    row("lone surrogate token", R"({"\ud800":0})", m, "invalid JSON");
    row("empty merges file", v, "", "merges.txt: file is empty");
    row("merges only newlines", v, "\n\r\n", "merges.txt: file is empty");
    row("3 fields", v, "#version: 0.2\na b c\n", "line 2: expected 2 space-separated parts, got 3");
    row("1 field", v, "ab\n", "line 1: expected 2 space-separated parts, got 1");
    row("double space", v, "a  b\n", "line 1: expected 2 space-separated parts, got 3");
    row("empty part", v, "a \n", "line 1: merge has an empty part");
    row("unknown left part", v, "a b\nx b\n", "merges.txt: line 2: merge part \"x\" is not in the vocabulary");
    row("unknown right part", v, "#version: 0.2\r\na b\r\na y\r\n", "line 3: merge part \"y\"");
    row("result not in vocab", v, "b a\n", "merge result \"ba\" is not in the vocabulary");
    row("invalid UTF-8 part", v, "\xFF b\n", "merge part \"\\xFF\"");
    row("tab separated", v, "a\tb\n", "got 1");
  }
  void corrupt_gpt2_files() {
    QFETCH(std::string, vocab);
    QFETCH(std::string, merges);
    QFETCH(std::string, expected);
    const std::string msg = expect_error([&] { Tokenizer::from_gpt2_strings(vocab, merges); });
    QVERIFY2(msg.find(expected) != std::string::npos, ("message was: " + msg).c_str());
  }

  void corrupt_tokenizer_json_data() {
    QTest::addColumn<std::string>("text");
    QTest::addColumn<std::string>("expected");
    auto with = [](auto&& edit) {
      json j = small_tokenizer_json();
      edit(j);
      return j.dump();
    };
    auto row = [](const char* name, std::string text, std::string expected) {
      QTest::newRow(name) << std::move(text) << std::move(expected);
    };
    row("empty", "", "tokenizer.json: file is empty");
    row("invalid", "{\"model\":", "invalid JSON");
    row("top level array", "[]", "top level: expected an object");
    row("deep nesting", "{\"x\":" + std::string(5000, '[') + std::string(5000, ']') + "}", "nesting deeper");
    row("duplicate key", R"({"model":{},"model":{}})", "duplicate key 'model'");
    row("no model", with([](json& j) { j.erase("model"); }), "missing \"model\"");
    row("model is a string", with([](json& j) { j["model"] = "BPE"; }), "model: expected an object, got a string");
    row("WordPiece", with([](json& j) { j["model"]["type"] = "WordPiece"; }),
        "model type \"WordPiece\" is not supported");
    row("Unigram", with([](json& j) { j["model"]["type"] = "Unigram"; }), "not supported (only BPE)");
    row("type not string", with([](json& j) { j["model"]["type"] = 3; }), "model.type: expected a string");
    row("no vocab", with([](json& j) { j["model"].erase("vocab"); }), "missing \"model.vocab\"");
    row("no merges", with([](json& j) { j["model"].erase("merges"); }), "missing \"model.merges\"");
    row("vocab is array", with([](json& j) { j["model"]["vocab"] = json::array({"a"}); }),
        "model.vocab: expected an object");
    row("vocab id string", with([](json& j) { j["model"]["vocab"]["a"] = "0"; }), "expected an integer token id");
    row("vocab duplicate id", with([](json& j) { j["model"]["vocab"]["c"] = 0; }), "given to two tokens");
    row("merges is object", with([](json& j) { j["model"]["merges"] = json::object(); }),
        "model.merges: expected an array");
    row("merge is number", with([](json& j) { j["model"]["merges"][1] = 5; }), "model.merges[1]: expected a string");
    row("merge 3 fields", with([](json& j) { j["model"]["merges"][0] = "a b c"; }), "model.merges[0]: expected 2");
    row("merge pair of 3", with([](json& j) {
          j["model"]["merges"][0] = json::array({"a", "b", "c"});
        }),
        "expected a pair, got 3");
    row("merge pair of 1", with([](json& j) { j["model"]["merges"][0] = json::array({"a"}); }),
        "expected a pair, got 1");
    row("merge pair non-string", with([](json& j) {
          j["model"]["merges"][0] = json::array({"a", 1});
        }),
        "expected a string, got an integer");
    row("merge unknown part", with([](json& j) {
          j["model"]["merges"][1] = json::array({"q", "a"});
        }),
        "model.merges[1]: merge part \"q\"");
    row("merge unknown result", with([](json& j) { j["model"]["merges"][1] = "b c"; }), "merge result \"bc\"");
    row("added_tokens object", with([](json& j) { j["added_tokens"] = json::object(); }),
        "added_tokens: expected an array");
    row("added token no id", with([](json& j) { j["added_tokens"][0].erase("id"); }),
        "added_tokens[0]: missing \"id\"");
    row("added token id string", with([](json& j) { j["added_tokens"][0]["id"] = "6"; }),
        "added_tokens[0].id: expected an integer");
    row("added token negative id", with([](json& j) { j["added_tokens"][0]["id"] = -3; }), "outside [0, 2^31 - 1)");
    row("added token huge id", with([](json& j) { j["added_tokens"][0]["id"] = 2000000000; }), "unused ids");
    row("added token empty", with([](json& j) { j["added_tokens"][0]["content"] = ""; }), "empty content");
    row("added token too long", with([](json& j) { j["added_tokens"][0]["content"] = std::string(300, 'x'); }),
        "more than the 256");
    row("added token content number", with([](json& j) { j["added_tokens"][0]["content"] = 1; }),
        ".content: expected a string");
    row("added token special not bool", with([](json& j) { j["added_tokens"][0]["special"] = "yes"; }),
        ".special: expected a boolean");
    row("added token id mismatch", with([](json& j) { j["added_tokens"][0]["content"] = "ab"; }),
        "\"ab\" has id 6 but the vocabulary gives it id 2");
    row("added token id collision", with([](json& j) { j["added_tokens"][0]["id"] = 3; }),
        "id 3 is given to two tokens");
    row("added token twice", with([](json& j) {
          j["added_tokens"].push_back({{"id", 7}, {"content", "<|endoftext|>"}});
        }),
        "has id 7 but the vocabulary gives it id 6");
    row("added token lstrip", with([](json& j) { j["added_tokens"][0]["lstrip"] = true; }),
        "added_tokens[0]: \"<|endoftext|>\" has lstrip = true, which is not supported");
    row("added token rstrip", with([](json& j) { j["added_tokens"][0]["rstrip"] = true; }), "has rstrip = true");
    row("added token single_word", with([](json& j) { j["added_tokens"][0]["single_word"] = true; }),
        "has single_word = true");
    row("added token lstrip not bool", with([](json& j) { j["added_tokens"][0]["lstrip"] = 1; }),
        ".lstrip: expected a boolean");
    row("no pre_tokenizer", with([](json& j) { j["pre_tokenizer"] = nullptr; }), "pre_tokenizer is missing");
    row("Metaspace", with([](json& j) {
          j["pre_tokenizer"] = {{"type", "Metaspace"}};
        }),
        "pre_tokenizer type \"Metaspace\" is not supported");
    // [Split, ByteLevel] is supported for the Llama-3 / Qwen2 patterns only (test_tokenizer_llama.cpp).
    row("Split + ByteLevel", with([](json& j) {
          j["pre_tokenizer"] = {{"type", "Sequence"},
                                {"pretokenizers",
                                 json::array(
                                     {{{"type", "Split"}, {"pattern", {{"Regex", "x"}}}, {"behavior", "Isolated"}},
                                      {{"type", "ByteLevel"}, {"use_regex", false}}})}};
        }),
        "pattern.Regex \"x\" is not a supported split pattern");
    row("Digits not individual", with([](json& j) {
          j["pre_tokenizer"] = {{"type", "Sequence"},
                                {"pretokenizers",
                                 json::array({{{"type", "Digits"}, {"individual_digits", false}},
                                              {{"type", "ByteLevel"}, {"add_prefix_space", false}}})}};
        }),
        "Digits with individual_digits = false is not supported");
    row("pre_tokenizer no type", with([](json& j) { j["pre_tokenizer"].erase("type"); }),
        "pre_tokenizer: missing \"type\"");
    row("add_prefix_space string", with([](json& j) { j["pre_tokenizer"]["add_prefix_space"] = "no"; }),
        "add_prefix_space: expected a boolean");
    row("normalizer NFKC", with([](json& j) {
          j["normalizer"] = {{"type", "NFKC"}};
        }),
        "normalizer type \"NFKC\" is not supported (only NFC)");
    row("normalizer [NFC, Lowercase]", with([](json& j) {
          j["normalizer"] = {{"type", "Sequence"},
                             {"normalizers", json::array({{{"type", "NFC"}}, {{"type", "Lowercase"}}})}};
        }),
        "normalizer type \"Sequence\" is not supported");
    row("decoder WordPiece", with([](json& j) {
          j["decoder"] = {{"type", "WordPiece"}};
        }),
        "decoder type \"WordPiece\"");
    row("byte_fallback", with([](json& j) { j["model"]["byte_fallback"] = true; }), "byte_fallback is not supported");
    row("subword prefix", with([](json& j) { j["model"]["continuing_subword_prefix"] = "##"; }),
        "continuing_subword_prefix \"##\" is not supported");
    row("unk not in vocab", with([](json& j) { j["model"]["unk_token"] = "<unk>"; }),
        "unk_token \"<unk>\" is not in the vocabulary");
    row("unk not string", with([](json& j) { j["model"]["unk_token"] = 0; }),
        "model.unk_token: expected a string or null");
    row("dropout string", with([](json& j) { j["model"]["dropout"] = "0.1"; }), "model.dropout: expected a number");
  }
  void corrupt_tokenizer_json() {
    QFETCH(std::string, text);
    QFETCH(std::string, expected);
    const std::string msg = expect_error([&] { Tokenizer::from_tokenizer_json_string(text); });
    QVERIFY2(msg.find(expected) != std::string::npos, ("message was: " + msg).c_str());
  }

  // StarCoder's tokenizer.json layout, [Digits(individual_digits), ByteLevel], is its GGUF "starcoder"
  // pre-tokenizer (whose splits test_tokenizer_llama checks against HF tokenizers).
  void starcoder_layout_loads() {
    json j = small_tokenizer_json();
    j["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           json::array({{{"type", "Digits"}, {"individual_digits", true}},
                                        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}})}};
    const auto tok = Tokenizer::from_tokenizer_json_string(j.dump());
    QCOMPARE(tok->export_vocab().pre_tokenizer, std::string("starcoder"));
    QCOMPARE(tok->encode("ab a<|endoftext|>", true), (std::vector<int32_t>{2, 5, 6}));
  }

  void small_tokenizer_json_loads() {
    // The base of the table above is itself valid, so each row fails for its one change.
    const auto tok = Tokenizer::from_tokenizer_json_string(small_tokenizer_json().dump());
    QCOMPARE(tok->vocab_size(), 7);
    QCOMPARE(tok->encode("ab a<|endoftext|>", true), (std::vector<int32_t>{2, 5, 6}));
    QCOMPARE(tok->decode(tok->encode("ab a<|endoftext|>", true)), std::string("ab a<|endoftext|>"));
  }

  void file_errors_name_the_path() {
    const std::string missing = k_data + "/no/such/vocab.json";
    QVERIFY(expect_error([&] { Tokenizer::from_gpt2_files(missing, k_merges_path); }).find(missing) !=
            std::string::npos);
    QVERIFY(expect_error([&] { Tokenizer::from_gpt2_files(k_vocab_path, k_data); }).find(k_data) != std::string::npos);
    QVERIFY(expect_error([&] { Tokenizer::from_tokenizer_json(missing); }).find("cannot open") != std::string::npos);
    // A merges file given as the vocab: the error names the file that was wrong.
    QVERIFY(expect_error([&] {
              Tokenizer::from_gpt2_files(k_merges_path, k_merges_path);
            }).find(k_merges_path + ": invalid JSON") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
