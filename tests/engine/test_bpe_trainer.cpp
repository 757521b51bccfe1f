// Tests for the byte-level BPE trainer (engine/tokenizer_trainer.h).
//
// What is pinned down here:
//   * the merges of small corpora computed by hand: frequency order, ties to the smaller ids,
//     non-overlapping left-to-right merging, the minimum pair count;
//   * consistency with the tokenizer it builds: encoding the training text gives exactly the number
//     of tokens the training segmentation had, and decoding is lossless, for random small-alphabet
//     corpora (which also make two merges spell the same token);
//   * special tokens are never merged into text and encode to their ids;
//   * agreement with Hugging Face `tokenizers`: the committed tokenizer.json (trained by our CLI on
//     the committed corpus) encodes the fixture texts to HF's ids, and training again on the corpus
//     gives exactly that vocabulary (tests/tools/make_bpe_trainer_fixture.py);
//   * clear errors for bad options and for no text.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer.h"
#include "engine/tokenizer_trainer.h"
#include "tokenizer/pre_tokenizer.h"

using engine::BpeTrainer;
using engine::BpeTrainingOptions;
using engine::BpeTrainingReport;
using nlohmann::json;

namespace {

const std::string k_fixture = std::string(WB_TEST_DATA_DIR) + "/tokenizer/trained";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

BpeTrainingOptions options(int32_t vocab, std::string pre = "gpt-2", uint64_t min_count = 2) {
  BpeTrainingOptions o;
  o.vocab_size = vocab;
  o.special_tokens = {};
  o.pre_tokenizer = std::move(pre);
  o.min_pair_count = min_count;
  return o;
}

std::vector<std::string> merges_of(const engine::Tokenizer& tok) { return tok.export_vocab().merges; }

// Trains on `lines` (each added as its own chunk) and checks the two invariants every trained
// tokenizer must keep against its own training text.
std::unique_ptr<engine::Tokenizer> train_checked(const std::vector<std::string>& lines, const BpeTrainingOptions& o,
                                                 BpeTrainingReport* report_out = nullptr) {
  BpeTrainer trainer(o);
  for (const std::string& l : lines) trainer.add_text(l);
  BpeTrainingReport report;
  auto tok = trainer.train(&report);
  uint64_t encoded = 0;
  for (const std::string& l : lines) {
    const std::vector<int32_t> ids = tok->encode(l);
    encoded += ids.size();
    if (tok->decode(ids) != l) {
      QTest::qFail("decode(encode(x)) != x", __FILE__, __LINE__);
      return tok;
    }
  }
  if (encoded != report.tokens_after)
    QTest::qFail(("encoding the corpus gives " + std::to_string(encoded) + " tokens, training counted " +
                  std::to_string(report.tokens_after))
                     .c_str(),
                 __FILE__, __LINE__);
  if (report_out) *report_out = report;
  return tok;
}

}  // namespace

class TestBpeTrainer : public QObject {
  Q_OBJECT

 private slots:
  void merges_follow_pair_frequency() {
    // Pieces: "ab" x1, " ab" x2, " cd" x1. (a,b) occurs 3 times -> first; then (' ', ab) twice;
    // the rest occur once, below the minimum of 2.
    BpeTrainingReport report;
    auto tok = train_checked({"ab ab ab cd"}, options(1000), &report);
    QCOMPARE(merges_of(*tok), (std::vector<std::string>{"a b", "Ġ ab"}));
    QCOMPARE(tok->vocab_size(), 258);
    QCOMPARE(report.merges, 2);
    QCOMPARE(report.last_merge_count, uint64_t{2});
    QCOMPARE(report.distinct_pieces, uint64_t{3});
    QCOMPARE(report.tokens_after, uint64_t{1 + 2 * 1 + 3});  // " cd" stays three bytes
    QCOMPARE(tok->encode(" ab"), (std::vector<int32_t>{257}));
  }

  void ties_go_to_the_smaller_ids() {
    // Every pair occurs once (minimum 1): (' ', z) = (32, 122) sorts before (x, y) = (120, 121); then
    // (x, y) before (Ġz = 256, w).
    auto tok = train_checked({"xy zw"}, options(1000, "gpt-2", 1));
    QCOMPARE(merges_of(*tok), (std::vector<std::string>{"Ġ z", "x y", "Ġz w"}));
  }

  void merging_is_left_to_right_without_overlap() {
    // "aaaa" x2 and "aaa" x1 (one piece each: no spaces, separate chunks). (a,a) occurs 3+3+2 = 8
    // times -> merged first, leftmost first: aaaa -> [aa, aa], aaa -> [aa, a]. Then (aa, aa) twice.
    BpeTrainingReport report;
    auto tok = train_checked({"aaaa", "aaaa", "aaa"}, options(1000), &report);
    QCOMPARE(merges_of(*tok), (std::vector<std::string>{"a a", "aa aa"}));
    QCOMPARE(report.tokens_after, uint64_t{1 + 1 + 2});
  }

  void vocabulary_size_is_respected() {
    std::vector<std::string> lines;
    std::mt19937 rng(3);
    for (int i = 0; i < 200; ++i) {
      std::string l;
      for (int j = 0; j < 40; ++j) l += static_cast<char>('a' + rng() % 6), l += (rng() % 5 == 0 ? " " : "");
      lines.push_back(l);
    }
    auto tok = train_checked(lines, options(300));
    QCOMPARE(tok->vocab_size(), 300);
  }

  void random_corpora_stay_consistent() {
    // Small alphabets and a minimum count of 1 make long merges and, now and then, a second merge that
    // spells an existing token; the invariants of train_checked must hold for every seed.
    for (uint32_t seed = 1; seed <= 30; ++seed) {
      std::mt19937 rng(seed);
      std::vector<std::string> lines;
      const int n_lines = 1 + static_cast<int>(rng() % 20);
      for (int i = 0; i < n_lines; ++i) {
        std::string l;
        const int len = static_cast<int>(rng() % 60);
        for (int j = 0; j < len; ++j) {
          const uint32_t r = rng() % 10;
          l += r < 7 ? static_cast<char>('a' + r % 3) : r == 7 ? ' ' : r == 8 ? '1' : static_cast<char>(0xC3);
        }
        lines.push_back(l);
      }
      const auto tok = train_checked(lines, options(2000, seed % 2 ? "qwen2" : "gpt-2", 1));
      const auto e = tok->export_vocab();
      std::set<std::string> unique(e.pieces.begin(), e.pieces.end());
      QCOMPARE(unique.size(), e.pieces.size());
    }
  }

  void special_tokens_are_cut_out_and_encode_to_their_ids() {
    BpeTrainingOptions o = options(400, "qwen2");
    o.special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
    std::vector<std::string> lines;
    for (int i = 0; i < 50; ++i)
      lines.push_back("<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\nhi<|im_end|><|endoftext|>");
    BpeTrainer trainer(o);
    for (const std::string& l : lines) trainer.add_text(l);
    auto tok = trainer.train();
    for (const std::string& m : tok->export_vocab().merges) QVERIFY2(m.find('<') == std::string::npos, m.c_str());
    QCOMPARE(tok->eos_id(), std::optional<int32_t>(0));
    const std::vector<int32_t> ids = tok->encode("<|im_start|>user\nhi<|im_end|>", /*allow_special=*/true);
    QCOMPARE(ids.front(), 1);
    QCOMPARE(ids.back(), 2);
    // Without allow_special the markers are ordinary text.
    QVERIFY(tok->encode("<|im_start|>").size() > 1);
  }

  void agrees_with_hugging_face() {
    const json fixture = json::parse(read_all(k_fixture + "/hf_encodings.json"));
    const auto committed = engine::Tokenizer::from_tokenizer_json(k_fixture + "/tokenizer.json");
    for (const json& c : fixture["cases"]) {
      const std::string text = c["text"];
      const std::vector<int32_t> expected = c["ids"].get<std::vector<int32_t>>();
      QCOMPARE(committed->encode(text, /*allow_special=*/true), expected);
    }
    // Training again on the committed corpus reproduces the committed vocabulary exactly.
    BpeTrainingOptions o;
    o.vocab_size = fixture["vocab_size"];
    o.pre_tokenizer = fixture["pre_tokenizer"];
    BpeTrainer trainer(o);
    std::istringstream corpus(read_all(k_fixture + "/corpus.txt"));
    std::string line;
    while (std::getline(corpus, line)) trainer.add_text(line + "\n");
    const auto retrained = trainer.train();
    const auto a = retrained->export_vocab(), b = committed->export_vocab();
    QCOMPARE(a.pieces, b.pieces);
    QCOMPARE(a.merges, b.merges);
    QCOMPARE(a.token_types, b.token_types);
  }

  void bad_options_are_refused() {
    auto refused = [](BpeTrainingOptions o, const char* needle) {
      try {
        BpeTrainer t(o);
        t.train();
      } catch (const engine::Error& e) {
        return std::string(e.what()).find(needle) != std::string::npos;
      }
      return false;
    };
    QVERIFY(refused(options(255), "smaller than"));
    BpeTrainingOptions dup = options(1000);
    dup.special_tokens = {"<s>", "<s>"};
    QVERIFY(refused(dup, "twice"));
    BpeTrainingOptions empty_special = options(1000);
    empty_special.special_tokens = {""};
    QVERIFY(refused(empty_special, "empty"));
    QVERIFY(refused(options(1000, "bert"), "unknown pre-tokenizer"));
    BpeTrainingOptions byte_special = options(1000);
    byte_special.special_tokens = {"x"};
    QVERIFY(!refused(byte_special, "spelled like"));  // no text yet: refused for that instead
    try {
      BpeTrainer t(byte_special);
      t.add_text("some text");
      t.train();
      QFAIL("a special token spelled like the byte 'x' was accepted");
    } catch (const engine::Error& e) {
      QVERIFY2(std::string(e.what()).find("spelled like") != std::string::npos, e.what());
    }
    QVERIFY(refused(options(1000), "no text"));
  }
};

QTEST_APPLESS_MAIN(TestBpeTrainer)
#include "test_bpe_trainer.moc"
