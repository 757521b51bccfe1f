// Tests for the Llama-3 / Qwen2 split pre-tokenizers and the SentencePiece-style BPE tokenizer.
//
// What is pinned down here:
//   * the two split scanners agree piece for piece with HF tokenizers' regex on the fixture texts,
//     and tiny tokenizer.json files with the real Llama-3 / Qwen2 layout encode exactly like HF;
//   * Tokenizer::from_spm_vocab on a tiny sentencepiece BPE model (byte fallback) encodes exactly
//     like sentencepiece (tests/tools/make_llama_tokenizer_fixture.py makes these fixtures);
//   * GGUF's "starcoder" pre-tokenizer splits as HF tokenizers does with StarCoder's pre-tokenizer
//     (tests/tools/make_starcoder_pretok_fixture.py);
//   * totality: any bytes, including invalid UTF-8, encode without throwing and decode back;
//   * control tokens are matched only with allow_special;
//   * 1 MB inputs of one repeated character stay far under a second (linear scanners, heap merging);
//   * every corrupt input in the tables ends in engine::Error with a message naming the problem.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "tokenizer/pre_tokenizer.h"

using engine::Tokenizer;
using nlohmann::json;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string k_dir = std::string(WB_TEST_DATA_DIR) + "/tokenizer/";

// Release builds take 10-400 ms of CPU per case; sanitizer and debug builds get headroom, not a pass.
// Measured as this thread's CPU time, not wall time: a busy machine (other builds, ctest -j) stretches
// wall time several-fold, while a quadratic tokenizer would still take minutes of CPU here.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(NDEBUG)
constexpr qint64 k_long_input_limit_ms = 10000;
#else
constexpr qint64 k_long_input_limit_ms = 1000;
#endif

qint64 thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<qint64>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const json& fixture() {
  static const json f = json::parse(read_file(k_dir + "llama_encodings.json"));
  return f;
}

std::string printable(const std::string& s) { return json(s).dump(-1, ' ', true, json::error_handler_t::replace); }

std::string show(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

struct SpmFixture {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  std::optional<int32_t> bos, eos, unk;
};

SpmFixture spm_fixture() {
  const json v = json::parse(read_file(k_dir + "tiny_spm_vocab.json"));
  SpmFixture f;
  f.tokens = v.at("tokens").get<std::vector<std::string>>();
  f.scores = v.at("scores").get<std::vector<float>>();
  f.types = v.at("token_types").get<std::vector<int32_t>>();
  f.bos = v.at("bos").get<int32_t>();
  f.eos = v.at("eos").get<int32_t>();
  f.unk = v.at("unk").get<int32_t>();
  return f;
}

std::unique_ptr<Tokenizer> make_spm(const SpmFixture& f, bool add_space_prefix = true) {
  return Tokenizer::from_spm_vocab(f.tokens, f.scores, f.types, f.bos, f.eos, f.unk, add_space_prefix);
}

std::unique_ptr<Tokenizer> load_family(const std::string& name) {
  return Tokenizer::from_tokenizer_json(k_dir + "tiny_" + name + ".json");
}

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

std::vector<std::string> random_byte_strings(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  const std::string alphabet = "aZ9 '\r\n\t!\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\x80\xBF\xC0\xFF\xED\xA0\x80";
  for (int i = 0; i < count; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 40);
    for (int j = 0; j < n; ++j)
      s += (rng() % 3 == 0) ? static_cast<char>(rng() & 0xFF) : alphabet[rng() % alphabet.size()];
    out.push_back(s);
  }
  return out;
}

// A tokenizer.json with the Llama-3 layout, for the corrupt-file table.
json llama3_json() { return json::parse(read_file(k_dir + "tiny_llama3.json")); }

// How many fixture rows ({"text", "pieces"}) `pre` splits differently; the first few are printed.
int split_mismatches(const engine::tokenizer::PreTokenizer& pre, const json& rows) {
  int failures = 0;
  for (const json& r : rows) {
    const std::string text = r.at("text");
    std::vector<std::string_view> got;
    pre.split(text, got);
    const auto want = r.at("pieces").get<std::vector<std::string>>();
    const std::vector<std::string> got_s(got.begin(), got.end());
    if (got_s != want && ++failures <= 5)
      qWarning("split mismatch for %s:\n  got  %s\n  want %s", printable(text).c_str(), json(got_s).dump().c_str(),
               json(want).dump().c_str());
  }
  return failures;
}

}  // namespace

class TestTokenizerLlama : public QObject {
  Q_OBJECT

 private slots:
  void split_scanners_match_reference_data() {
    QTest::addColumn<std::string>("name");
    QTest::newRow("llama3") << std::string("llama3");
    QTest::newRow("qwen2") << std::string("qwen2");
  }
  void split_scanners_match_reference() {
    QFETCH(std::string, name);
    const auto pre = name == "llama3" ? engine::tokenizer::make_llama3_pre_tokenizer()
                                      : engine::tokenizer::make_qwen2_pre_tokenizer();
    const json& rows = fixture().at(name + "_splits");
    QVERIFY(rows.size() > 100);
    QCOMPARE(split_mismatches(*pre, rows), 0);
  }

  // GGUF "starcoder" (StarCoder's tokenizer.json: Digits(individual_digits) then ByteLevel's GPT-2
  // pattern) against HF tokenizers' pre_tokenize_str (tests/tools/make_starcoder_pretok_fixture.py).
  void starcoder_split_matches_hf() {
    const auto pre = engine::tokenizer::make_pre_tokenizer_by_gguf_name("starcoder");
    QVERIFY(pre);
    QCOMPARE(pre->gguf_name(), std::string_view("starcoder"));
    const json rows = json::parse(read_file(k_dir + "starcoder_splits.json")).at("splits");
    QVERIFY(rows.size() > 300);
    QCOMPARE(split_mismatches(*pre, rows), 0);
  }

  void families_match_reference_data() { split_scanners_match_reference_data(); }
  void families_match_reference() {
    QFETCH(std::string, name);
    const auto tok = load_family(name);
    int failures = 0;
    for (const json& r : fixture().at(name)) {
      const std::string text = r.at("text");
      const auto want = r.at("ids").get<std::vector<int32_t>>();
      const std::vector<int32_t> got = tok->encode(text);
      if (got != want && ++failures <= 5)
        qWarning("mismatch for %s:\n  got  %s\n  want %s", printable(text).c_str(), show(got).c_str(),
                 show(want).c_str());
      if (tok->decode(got) != text && ++failures <= 5) qWarning("decode mismatch for %s", printable(text).c_str());
    }
    QCOMPARE(failures, 0);
  }

  void families_special_tokens() {
    const auto tok = load_family("llama3");
    const std::optional<int32_t> bot = tok->token_id("<|begin_of_text|>");
    QVERIFY(bot.has_value());
    QCOMPARE(tok->bos_id(), bot);
    QCOMPARE(tok->eos_id(), tok->token_id("<|end_of_text|>"));
    QVERIFY(tok->eos_id().has_value());
    const std::string text = "<|begin_of_text|>hi";
    const std::vector<int32_t> on = tok->encode(text, true);
    QVERIFY(!on.empty());
    QCOMPARE(on.front(), *bot);
    const std::vector<int32_t> off = tok->encode(text, false);
    QVERIFY(std::find(off.begin(), off.end(), *bot) == off.end());
    QCOMPARE(tok->decode(off), text);
  }

  void spm_matches_sentencepiece() {
    const auto tok = make_spm(spm_fixture());
    int failures = 0;
    const json& rows = fixture().at("spm");
    QVERIFY(rows.size() > 50);
    for (const json& r : rows) {
      const std::string text = r.at("text");
      const auto want = r.at("ids").get<std::vector<int32_t>>();
      const std::vector<int32_t> got = tok->encode(text);
      if (got != want && ++failures <= 5)
        qWarning("mismatch for %s:\n  got  %s\n  want %s", printable(text).c_str(), show(got).c_str(),
                 show(want).c_str());
      const std::string expected_decode = text.empty() ? "" : " " + text;
      if (tok->decode(got) != expected_decode && ++failures <= 5)
        qWarning("decode mismatch for %s", printable(text).c_str());
    }
    QCOMPARE(failures, 0);
  }

  void spm_basics() {
    const SpmFixture f = spm_fixture();
    const auto tok = make_spm(f);
    QCOMPARE(tok->vocab_size(), static_cast<int32_t>(f.tokens.size()));
    QCOMPARE(tok->bos_id(), f.bos);
    QCOMPARE(tok->eos_id(), f.eos);
    QCOMPARE(tok->token_piece(*f.bos), std::string("<s>"));
    QCOMPARE(tok->token_id("<0x0A>").has_value(), true);
    QCOMPARE(tok->token_bytes(*tok->token_id("<0x0A>")), std::string("\n"));
    QCOMPARE(tok->token_bytes(-1), std::string());
    QCOMPARE(tok->token_bytes(tok->vocab_size()), std::string());
    // Control tokens only with allow_special; the text after one gets the space prefix again.
    const std::vector<int32_t> on = tok->encode("<s>Hello", true);
    QVERIFY(on.size() >= 2);
    QCOMPARE(on.front(), *f.bos);
    QCOMPARE(tok->decode(std::vector<int32_t>(on.begin() + 1, on.end())), std::string(" Hello"));
    const std::vector<int32_t> off = tok->encode("<s>Hello", false);
    QVERIFY(std::find(off.begin(), off.end(), *f.bos) == off.end());
    QCOMPARE(tok->decode(off), std::string(" <s>Hello"));
    QCOMPARE(tok->encode("<unk>", true), std::vector<int32_t>{*f.unk});
    QVERIFY(tok->encode("<unk>", false) != std::vector<int32_t>{*f.unk});
    // Several cut-out tokens: each following text segment gets its "▁" again.
    const std::vector<int32_t> two = tok->encode("a</s>b", true);
    QCOMPARE(tok->decode(two), std::string(" a</s> b"));
    // Without the prefix, the text is spelled as is.
    const auto plain = make_spm(f, false);
    QCOMPARE(plain->decode(plain->encode("a b")), std::string("a b"));
    QVERIFY(plain->encode("").empty());
    QVERIFY(tok->encode("").empty());
  }

  // Hand-made vocabularies pinning down the merge order and the fallbacks.
  void spm_merge_order() {
    const std::vector<std::string> tokens = {"<unk>",
                                             "<s>",
                                             "</s>",
                                             "\xE2\x96\x81",
                                             "a",
                                             "b",
                                             "\xE2\x96\x81"
                                             "a",
                                             "ab",
                                             "aa"};
    const std::vector<int32_t> types = {2, 3, 3, 1, 1, 1, 1, 1, 1};
    auto make = [&](float score_space_a, float score_ab, std::optional<int32_t> unk) {
      const std::vector<float> scores = {0, 0, 0, -3, -4, -4, score_space_a, score_ab, -1};
      return Tokenizer::from_spm_vocab(tokens, scores, types, 1, 2, unk, true);
    };
    // "▁a" scores higher than "ab": it wins at both places; "▁ab" is no token, so b stays alone.
    QCOMPARE(make(-1, -2, 0)->encode("ab a"), (std::vector<int32_t>{6, 5, 6}));
    // "ab" scores higher: it is merged first and "▁" stays alone before it.
    QCOMPARE(make(-1, -0.5f, 0)->encode("ab a"), (std::vector<int32_t>{3, 7, 6}));
    // Equal scores: the leftmost pair first, so "aaa" is "aa" + "a".
    QCOMPARE(make(-1, -1, 0)->encode("aaa"), (std::vector<int32_t>{6, 8}));
    const auto no_prefix = Tokenizer::from_spm_vocab(tokens, {0, 0, 0, -3, -4, -4, -1, -1, -1}, types, 1, 2, 0, false);
    QCOMPARE(no_prefix->encode("aaa"), (std::vector<int32_t>{8, 4}));
    // No byte tokens: an unknown character is one unknown token (or nothing without one).
    QCOMPARE(make(-1, -2, 0)->encode("a\xC3\xA9"), (std::vector<int32_t>{6, 0}));
    QCOMPARE(make(-1, -2, std::nullopt)
                 ->encode("a\xC3\xA9"
                          "b"),
             (std::vector<int32_t>{6, 5}));
    // Control tokens never take part in merging, even when text spells them.
    QCOMPARE(make(-1, -2, 0)->encode("<s>"), (std::vector<int32_t>{3, 0, 0, 0}));
  }

  void round_trips_any_bytes() {
    const auto llama3 = load_family("llama3");
    const auto qwen2 = load_family("qwen2");
    const auto spm = make_spm(spm_fixture(), false);
    for (const std::string& s : random_byte_strings(42, 400)) {
      QCOMPARE(llama3->decode(llama3->encode(s)), s);
      QCOMPARE(qwen2->decode(qwen2->encode(s)), s);
      QCOMPARE(spm->decode(spm->encode(s)), s);
    }
    // Every single byte, alone and between letters.
    for (int b = 0; b < 256; ++b) {
      const std::string s = "a" + std::string(1, static_cast<char>(b)) + "b";
      QCOMPARE(llama3->decode(llama3->encode(s)), s);
      QCOMPARE(spm->decode(spm->encode(s)), s);
    }
  }

  void split_invariants_on_any_bytes() {
    const auto pre3 = engine::tokenizer::make_llama3_pre_tokenizer();
    const auto preq = engine::tokenizer::make_qwen2_pre_tokenizer();
    for (const std::string& s : random_byte_strings(7, 400)) {
      for (const auto* pre : {pre3.get(), preq.get()}) {
        std::vector<std::string_view> pieces;
        pre->split(s, pieces);
        std::string joined;
        for (std::string_view p : pieces) {
          QVERIFY(!p.empty());
          joined += p;
        }
        QCOMPARE(joined, s);
      }
    }
  }

  void long_inputs_data() {
    QTest::addColumn<std::string>("unit");
    QTest::newRow("letter") << std::string("a");
    QTest::newRow("digit") << std::string("7");
    QTest::newRow("space") << std::string(" ");
    QTest::newRow("newline") << std::string("\n");
    QTest::newRow("crlf") << std::string("\r\n");
    QTest::newRow("punct") << std::string("!");
    QTest::newRow("apostrophe") << std::string("'");
    QTest::newRow("cjk") << std::string("\xE4\xB8\xAD");
    QTest::newRow("emoji") << std::string("\xF0\x9F\x98\x80");
    QTest::newRow("invalid") << std::string("\xFF");
  }
  void long_inputs() {
    QFETCH(std::string, unit);
    std::string text;
    while (text.size() < (1u << 20)) text += unit;
    const auto llama3 = load_family("llama3");
    const auto qwen2 = load_family("qwen2");
    const auto spm = make_spm(spm_fixture());
    for (const Tokenizer* tok : {llama3.get(), qwen2.get(), spm.get()}) {
      const qint64 start_ms = thread_cpu_ms();
      const std::vector<int32_t> ids = tok->encode(text);
      const qint64 ms = thread_cpu_ms() - start_ms;
      QVERIFY(!ids.empty());
      QVERIFY2(ms < k_long_input_limit_ms, qPrintable(QString("encoding 1 MB took %1 ms").arg(ms)));
      if (qEnvironmentVariableIsSet("WB_TOKENIZER_TIMING")) qInfo("%lld ms", static_cast<long long>(ms));
    }
    QCOMPARE(llama3->decode(llama3->encode(text)), text);
    QCOMPARE(spm->decode(spm->encode(text)), " " + text);
  }

  void corrupt_spm_vocab() {
    const SpmFixture good = spm_fixture();
    const int32_t n = static_cast<int32_t>(good.tokens.size());
    const int32_t byte_index =
        static_cast<int32_t>(std::find(good.types.begin(), good.types.end(), 6) - good.types.begin());
    QVERIFY(byte_index < n);
    struct Case {
      const char* name;
      std::function<void(SpmFixture&)> edit;
      const char* expected;
    };
    const std::vector<Case> cases = {
        {"empty",
         [](SpmFixture& f) {
           f.tokens.clear();
           f.scores.clear();
           f.types.clear();
           f.bos = f.eos = f.unk = std::nullopt;
         },
         "empty"},
        {"fewer scores", [](SpmFixture& f) { f.scores.pop_back(); }, "scores"},
        {"more types", [](SpmFixture& f) { f.types.push_back(1); }, "token types"},
        {"type 7", [](SpmFixture& f) { f.types[10] = 7; }, "token type 7"},
        {"type -1", [](SpmFixture& f) { f.types[10] = -1; }, "token type -1"},
        {"byte <0x-1>", [&](SpmFixture& f) { f.tokens[byte_index] = "<0x-1>"; }, "<0xHH>"},
        {"byte <0xZZ>", [&](SpmFixture& f) { f.tokens[byte_index] = "<0xZZ>"; }, "<0xHH>"},
        {"byte <0x100>", [&](SpmFixture& f) { f.tokens[byte_index] = "<0x100>"; }, "<0xHH>"},
        {"byte <0x4>", [&](SpmFixture& f) { f.tokens[byte_index] = "<0x4>"; }, "<0xHH>"},
        {"byte empty", [&](SpmFixture& f) { f.tokens[byte_index] = ""; }, "<0xHH>"},
        {"byte 0x41", [&](SpmFixture& f) { f.tokens[byte_index] = "0x41"; }, "<0xHH>"},
        {"byte twice", [&](SpmFixture& f) { f.tokens[byte_index + 1] = f.tokens[byte_index]; }, "already has token"},
        {"nan score", [](SpmFixture& f) { f.scores[20] = std::numeric_limits<float>::quiet_NaN(); }, "NaN"},
        {"bos -1", [](SpmFixture& f) { f.bos = -1; }, "bos id -1"},
        {"bos n", [n](SpmFixture& f) { f.bos = n; }, "bos id"},
        {"eos n", [n](SpmFixture& f) { f.eos = n + 5; }, "eos id"},
        {"unk huge", [](SpmFixture& f) { f.unk = std::numeric_limits<int32_t>::max(); }, "unk id"},
        {"unk min", [](SpmFixture& f) { f.unk = std::numeric_limits<int32_t>::min(); }, "unk id"},
    };
    for (const Case& c : cases) {
      SpmFixture f = good;
      c.edit(f);
      const std::string msg = expect_error([&] { make_spm(f); });
      QVERIFY2(msg.find(c.expected) != std::string::npos,
               qPrintable(QString("%1: message \"%2\" lacks \"%3\"").arg(c.name, msg.c_str(), c.expected)));
    }
    // Accepted: lower-case hex, no bos / eos / unk at all, infinite scores.
    SpmFixture f = good;
    const auto newline =
        static_cast<std::size_t>(std::find(f.tokens.begin(), f.tokens.end(), std::string("<0x0A>")) - f.tokens.begin());
    QVERIFY(newline < f.tokens.size());
    f.tokens[newline] = "<0x0a>";
    f.bos = f.eos = f.unk = std::nullopt;
    f.scores[30] = -std::numeric_limits<float>::infinity();
    const auto tok = make_spm(f, false);
    QCOMPARE(tok->encode("\n"), std::vector<int32_t>{static_cast<int32_t>(newline)});
    QVERIFY(!tok->bos_id().has_value());
  }

  void corrupt_tokenizer_json() {
    struct Case {
      const char* name;
      std::function<void(json&)> edit;
      const char* expected;
    };
    auto split = [](json& j) -> json& { return j["pre_tokenizer"]["pretokenizers"][0]; };
    auto byte_level = [](json& j) -> json& { return j["pre_tokenizer"]["pretokenizers"][1]; };
    const std::vector<Case> cases = {
        {"unknown pattern", [&](json& j) { split(j)["pattern"]["Regex"] = "\\s+|\\S+"; },
         "not a supported split pattern"},
        {"pattern with one char changed",
         [&](json& j) {
           std::string p = split(j)["pattern"]["Regex"];
           p[p.size() - 1] = '*';
           split(j)["pattern"]["Regex"] = p;
         },
         "not a supported split pattern"},
        {"string pattern",
         [&](json& j) {
           split(j)["pattern"] = {{"String", " "}};
         },
         "Regex"},
        {"pattern not object", [&](json& j) { split(j)["pattern"] = 5; }, "pattern"},
        {"regex not string", [&](json& j) { split(j)["pattern"]["Regex"] = json::array(); }, "Regex"},
        {"missing pattern", [&](json& j) { split(j).erase("pattern"); }, "missing \"pattern\""},
        {"behavior removed", [&](json& j) { split(j)["behavior"] = "Removed"; }, "Isolated"},
        {"behavior missing", [&](json& j) { split(j).erase("behavior"); }, "Isolated"},
        {"invert", [&](json& j) { split(j)["invert"] = true; }, "invert"},
        {"byte level regex", [&](json& j) { byte_level(j)["use_regex"] = true; }, "use_regex"},
        {"byte level prefix", [&](json& j) { byte_level(j)["add_prefix_space"] = true; }, "add_prefix_space"},
        {"split alone", [&](json& j) { j["pre_tokenizer"]["pretokenizers"] = json::array({split(j)}); },
         "not supported"},
        {"reversed order",
         [&](json& j) {
           json s = split(j), b = byte_level(j);
           j["pre_tokenizer"]["pretokenizers"] = json::array({b, s});
         },
         "not supported"},
        {"split at top level", [&](json& j) { j["pre_tokenizer"] = split(j); }, "not supported"},
    };
    for (const Case& c : cases) {
      json j = llama3_json();
      c.edit(j);
      const std::string text = j.dump();
      const std::string msg = expect_error([&] { Tokenizer::from_tokenizer_json_string(text); });
      QVERIFY2(msg.find(c.expected) != std::string::npos,
               qPrintable(QString("%1: message \"%2\" lacks \"%3\"").arg(c.name, msg.c_str(), c.expected)));
    }
    // The unmodified file loads from a string as well.
    QVERIFY(Tokenizer::from_tokenizer_json_string(llama3_json().dump()) != nullptr);
  }
};

QTEST_APPLESS_MAIN(TestTokenizerLlama)
#include "test_tokenizer_llama.moc"
