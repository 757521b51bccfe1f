// GGUF byte-level BPE vocabularies (Tokenizer::from_bpe_vocab): llama.cpp's rule for the Llama-3
// pre-tokenizer ("llama-bpe"), where a pre-token that is itself a vocabulary token is emitted as that
// token even when the merges cannot build it (llama.cpp's test vector "Cửa Việt": " Việt" is one
// token of the Llama-3 vocabulary that no merge sequence reaches). Other pre-tokenizers keep plain BPE.
#include <QtTest>

#include "engine/tokenizer.h"

using engine::Tokenizer;

class TestGgufBpeVocab : public QObject {
  Q_OBJECT

  static std::unique_ptr<Tokenizer> tiny(const std::string& pre) {
    // "abc" is in the vocabulary, but the only merge joins "b c": BPE alone gives "a" + "bc".
    return Tokenizer::from_bpe_vocab({"a", "b", "c", "bc", "abc"}, {"b c"}, pre, {}, std::nullopt, std::nullopt);
  }

 private slots:
  void llama_bpe_takes_a_whole_word_token() {
    const auto t = tiny("llama-bpe");
    QCOMPARE(t->encode("abc"), std::vector<int32_t>({4}));
    // A word that is not a token is merged as usual.
    QCOMPARE(t->encode("abcabc"), std::vector<int32_t>({0, 3, 0, 3}));
    QCOMPARE(tiny("llama3")->encode("abc"), std::vector<int32_t>({4}));
  }

  void other_pre_tokenizers_merge() {
    QCOMPARE(tiny("gpt-2")->encode("abc"), std::vector<int32_t>({0, 3}));
    QCOMPARE(tiny("qwen2")->encode("abc"), std::vector<int32_t>({0, 3}));
  }
};

QTEST_APPLESS_MAIN(TestGgufBpeVocab)
#include "test_gguf_bpe_vocab.moc"
