// GGUF models through load_model: tiny GPT-2 / Llama / Qwen2 files written by gguf-py from the HF
// fixtures (tests/tools/make_gguf_model_fixture.py, llama.cpp's naming and q/k permutation) must give
// the logits of the same models loaded from their HF directories, with equal configs; their
// tokenizers (GGUF "gpt2" byte-level BPE and "llama" SPM vocabularies) must encode as expected; and
// inconsistent or corrupt metadata (reliability.md §1.7 case 16), missing or misshapen tensors and
// wrongly typed metadata must each be an engine::Error.
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <functional>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "support/error_of.h"
#include "support/model_helpers.h"

using namespace engine;

namespace {

const std::string kData = std::string(WB_TEST_DATA_DIR);
const std::string kGguf = kData + "/gguf/";

QJsonObject read_json(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

std::vector<std::vector<int32_t>> expected_ids(const std::string& dir) {
  auto expected = io::SafetensorsFile::open(dir + "/expected.safetensors");
  const io::StTensor* ids_t = expected->find("input_ids");
  const uint64_t B = ids_t->shape[0], T = ids_t->shape[1];
  std::vector<int32_t> ids(B * T);
  std::memcpy(ids.data(), ids_t->data, ids.size() * 4);
  std::vector<std::vector<int32_t>> rows;
  for (uint64_t b = 0; b < B; ++b) rows.emplace_back(ids.begin() + b * T, ids.begin() + (b + 1) * T);
  return rows;
}

using MetaEdit = std::function<void(io::GgufMetadata&)>;
using TensorEdit = std::function<void(std::vector<io::GgufTensorToWrite>&)>;

// Writes a copy of fixture `src` with its metadata and tensor list edited.
void write_edited(const std::string& src, const std::string& dst, const MetaEdit& meta, const TensorEdit& tensors) {
  auto f = io::GgufFile::open(src);
  io::GgufMetadata md;
  for (const auto& kv : f->metadata())
    if (kv.first != "general.alignment") md.push_back(kv);
  std::vector<io::GgufTensorToWrite> ts;
  for (const auto& t : f->tensors()) ts.push_back({t.name, t.type, t.shape, t.data});
  if (meta) meta(md);
  if (tensors) tensors(ts);
  io::write_gguf(dst, md, ts);
}

void set_meta(io::GgufMetadata& md, const std::string& key, io::GgufValue v) {
  for (auto& kv : md)
    if (kv.first == key) {
      kv.second = std::move(v);
      return;
    }
  md.emplace_back(key, std::move(v));
}
void drop_meta(io::GgufMetadata& md, const std::string& key) {
  std::erase_if(md, [&](const auto& kv) { return kv.first == key; });
}
void drop_tensor(std::vector<io::GgufTensorToWrite>& ts, const std::string& name) {
  std::erase_if(ts, [&](const auto& t) { return t.name == name; });
}

}  // namespace

class TestGgufModel : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void detects_gguf() {
    const ModelFileInfo info = detect_model_format(kGguf + "tiny-gpt2-f32.gguf");
    QCOMPARE(info.format, ModelFormat::Gguf);
    // The small reader fixture is a GGUF too, but of an architecture we do not load.
    QVERIFY(error_of([&] { load_model(kGguf + "small.gguf"); }).contains("not supported"));
  }

  void logits_match_hf_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("hf");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("gpt2 f32") << "tiny-gpt2-f32.gguf"
                              << "tiny-gpt2" << 1e-5;
    QTest::newRow("llama f32") << "tiny-llama-f32.gguf"
                               << "tiny-llama" << 1e-5;
    // q8_0 weights (f16 / bf16 norms). The fixtures' weights are large (N(0, 0.2)), so rounding noise
    // is amplified: measured 0.29 with logits up to 5.8 (an f32 Qwen2 GGUF, checked by hand, gives
    // exactly the HF logits with rope_interleaved = false; the wrong rotary layout is off by several).
    QTest::newRow("qwen2 q8_0") << "tiny-qwen2-q8_0.gguf"
                                << "tiny-qwen2" << 0.5;
  }
  void logits_match_hf() {
    QFETCH(QString, file);
    QFETCH(QString, hf);
    QFETCH(double, tolerance);
    const std::string dir = kData + "/" + hf.toStdString();
    auto g = load_model(kGguf + file.toStdString());
    auto h = load_model(dir);
    const ModelConfig &a = g->config(), &b = h->config();
    QCOMPARE(a.arch, b.arch);
    QCOMPARE(a.n_layer, b.n_layer);
    QCOMPARE(a.n_embd, b.n_embd);
    QCOMPARE(a.n_head, b.n_head);
    QCOMPARE(a.n_kv_head, b.n_kv_head);
    QCOMPARE(a.vocab_size, b.vocab_size);
    QCOMPARE(a.max_seq_len, b.max_seq_len);
    QCOMPARE(a.ffn_dim, b.ffn_dim);
    QCOMPARE(a.norm_eps, b.norm_eps);
    QCOMPARE(a.tie_embeddings, b.tie_embeddings);
    QCOMPARE(a.qkv_bias, b.qkv_bias);
    if (a.arch == Arch::Llama) {
      QCOMPARE(a.rope_theta, b.rope_theta);
      QCOMPARE(a.rope_interleaved, hf == "tiny-llama");  // llama.cpp permutes Llama q/k, not Qwen2's
    }
    QVERIFY(g->tokenizer() != nullptr);
    for (const auto& row : expected_ids(dir)) {
      const auto lg = full_logits(*g, *m_be, row);
      const auto lh = full_logits(*h, *m_be, row);
      const double d = max_abs_diff(lg, lh);
      qInfo("%s: max |logit diff| GGUF vs HF %.3g", qPrintable(file), d);
      QVERIFY2(d < tolerance, qPrintable(QString("max |diff| %1").arg(d)));
    }
  }

  void bpe_tokenizer_matches_hf_tokenizers() {
    const QJsonObject j = read_json(kGguf + "tokens.json");
    const std::string sample = j["sample"].toString().toStdString();
    std::vector<int32_t> want;
    for (const auto& v : j["bpe_ids"].toArray()) want.push_back(v.toInt());
    QVERIFY(!want.empty());
    for (const char* file : {"tiny-gpt2-f32.gguf", "tiny-qwen2-q8_0.gguf"}) {
      auto m = load_model(kGguf + file);
      const Tokenizer* t = m->tokenizer();
      QVERIFY(t);
      QCOMPARE(t->vocab_size(), 512);
      QCOMPARE(t->encode(sample), want);
      QCOMPARE(t->decode(want), sample);
      QCOMPARE(t->bos_id(), std::optional<int32_t>(0));
      QCOMPARE(t->eos_id(), std::optional<int32_t>(1));
      // Control tokens only with allow_special.
      QCOMPARE(t->encode("<|end_of_text|>", true), std::vector<int32_t>{1});
      QVERIFY(t->encode("<|end_of_text|>").size() > 1);
    }
  }

  void spm_tokenizer_matches_vocab() {
    // The GGUF "llama" vocabulary is tiny_spm_vocab.json cut to 512 tokens; the GGUF path must build
    // the same tokenizer as from_spm_vocab on those arrays (the SPM encoder itself is tested elsewhere).
    const QJsonObject j = read_json(kData + "/tokenizer/tiny_spm_vocab.json");
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
    for (int i = 0; i < 512; ++i) {
      tokens.push_back(j["tokens"].toArray()[i].toString().toStdString());
      scores.push_back(float(j["scores"].toArray()[i].toDouble()));
      types.push_back(j["token_types"].toArray()[i].toInt());
    }
    auto ref = Tokenizer::from_spm_vocab(tokens, scores, types, j["bos"].toInt(), j["eos"].toInt(), j["unk"].toInt(),
                                         j["add_space_prefix"].toBool());
    auto m = load_model(kGguf + "tiny-llama-f32.gguf");
    const Tokenizer* t = m->tokenizer();
    QVERIFY(t);
    QCOMPARE(t->vocab_size(), 512);
    QCOMPARE(t->bos_id(), ref->bos_id());
    QCOMPARE(t->eos_id(), ref->eos_id());
    for (const char* s : {"Hello world", " the quick brown fox", "caf\xc3\xa9 \xe4\xb8\x96", "a\nb  c"}) {
      QCOMPARE(t->encode(s), ref->encode(s));
      QVERIFY(!t->encode(s).empty());
    }
  }

  void bad_files_are_errors_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("needle");
    const char* L = "tiny-llama-f32.gguf";
    const char* G = "tiny-gpt2-f32.gguf";
    int i = 0;
    QTest::newRow("block_count 0") << L << i++ << "block_count";
    QTest::newRow("head_count 0") << L << i++ << "head_count";
    QTest::newRow("head_count_kv not dividing") << L << i++ << "head_count_kv";
    QTest::newRow("embedding not divisible by heads") << L << i++ << "divisible";
    QTest::newRow("rope dims differ") << L << i++ << "rope.dimension_count";
    QTest::newRow("block_count too large (missing tensors)") << L << i++ << "blk.2.";
    QTest::newRow("missing tensor") << L << i++ << "blk.1.ffn_up.weight";
    QTest::newRow("wrong shape") << L << i++ << "blk.0.attn_k.weight";
    QTest::newRow("block_count is a string") << L << i++ << "block_count";
    QTest::newRow("rms epsilon is f64") << L << i++ << "layer_norm_rms_epsilon";
    QTest::newRow("missing context_length") << L << i++ << "context_length";
    QTest::newRow("scores are i32[]") << L << i++ << "tokenizer.ggml.scores";
    QTest::newRow("token_type is u32[]") << L << i++ << "tokenizer.ggml.token_type";
    QTest::newRow("tokens are not strings") << L << i++ << "tokenizer.ggml.tokens";
    QTest::newRow("token count differs from embedding rows") << L << i++ << "tokenizer.ggml.tokens";
    QTest::newRow("bos out of range") << L << i++ << "bos";
    QTest::newRow("unsupported architecture") << L << i++ << "mamba";
    QTest::newRow("unexpected attention bias") << L << i++ << "attn_q.bias";
    QTest::newRow("unsupported tokenizer model") << L << i++ << "tokenizer.ggml.model";
    QTest::newRow("gpt2 missing layer_norm_epsilon") << G << i++ << "layer_norm_epsilon";
    QTest::newRow("gpt2 head_count_kv differs") << G << i++ << "n_kv_head";
    QTest::newRow("gpt2 merges reference unknown tokens") << G << i++ << "merge";
    QTest::newRow("gpt2 unknown pre-tokenizer") << G << i++ << "pre-tokenizer";
    QTest::newRow("gpt2 untied output head") << G << i++ << "output.weight";
    QTest::newRow("gpt2 missing position_embd") << G << i++ << "position_embd.weight";
  }
  void bad_files_are_errors() {
    QFETCH(QString, file);
    QFETCH(int, which);
    QFETCH(QString, needle);
    using io::GgufValue;
    const std::vector<float> ones(64 * 512, 0.5f);
    const std::vector<std::pair<MetaEdit, TensorEdit>> edits = {
        {[](auto& md) { set_meta(md, "llama.block_count", GgufValue(uint32_t(0))); }, {}},
        {[](auto& md) { set_meta(md, "llama.attention.head_count", GgufValue(uint32_t(0))); }, {}},
        {[](auto& md) { set_meta(md, "llama.attention.head_count_kv", GgufValue(uint32_t(3))); }, {}},
        {[](auto& md) { set_meta(md, "llama.attention.head_count", GgufValue(uint32_t(3))); }, {}},
        {[](auto& md) { set_meta(md, "llama.rope.dimension_count", GgufValue(uint32_t(8))); }, {}},
        {[](auto& md) { set_meta(md, "llama.block_count", GgufValue(uint32_t(3))); }, {}},
        {{}, [](auto& ts) { drop_tensor(ts, "blk.1.ffn_up.weight"); }},
        {{},
         [](auto& ts) {
           for (auto& t : ts)
             if (t.name == "blk.0.attn_k.weight") t.shape = {32, 64};
         }},
        {[](auto& md) { set_meta(md, "llama.block_count", GgufValue(std::string("2"))); }, {}},
        {[](auto& md) { set_meta(md, "llama.attention.layer_norm_rms_epsilon", GgufValue(1e-5)); }, {}},
        {[](auto& md) { drop_meta(md, "llama.context_length"); }, {}},
        {[](auto& md) { set_meta(md, "tokenizer.ggml.scores", GgufValue::array(std::vector<int32_t>(512, 0))); }, {}},
        {[](auto& md) { set_meta(md, "tokenizer.ggml.token_type", GgufValue::array(std::vector<uint32_t>(512, 1))); },
         {}},
        {[](auto& md) { set_meta(md, "tokenizer.ggml.tokens", GgufValue::array(std::vector<float>(512, 0.f))); }, {}},
        {[](auto& md) {
           for (auto& kv : md)
             if (kv.first == "tokenizer.ggml.tokens") {
               std::vector<std::string> s = kv.second.strings();
               s.pop_back();
               kv.second = GgufValue::array(s);
             }
         },
         {}},
        {[](auto& md) { set_meta(md, "tokenizer.ggml.bos_token_id", GgufValue(uint32_t(9999))); }, {}},
        {[](auto& md) { set_meta(md, "general.architecture", GgufValue(std::string("mamba"))); }, {}},
        {{},
         [&](auto& ts) {
           ts.push_back({"blk.0.attn_q.bias", io::GgmlType::F32, {64}, ones.data()});
         }},
        {[](auto& md) { set_meta(md, "tokenizer.ggml.model", GgufValue(std::string("bert"))); }, {}},
        {[](auto& md) { drop_meta(md, "gpt2.attention.layer_norm_epsilon"); }, {}},
        {[](auto& md) { set_meta(md, "gpt2.attention.head_count_kv", GgufValue(uint32_t(2))); }, {}},
        {[](auto& md) {
           set_meta(md, "tokenizer.ggml.merges", GgufValue::array(std::vector<std::string>{"nosuch token"}));
         },
         {}},
        {[](auto& md) { set_meta(md, "tokenizer.ggml.pre", GgufValue(std::string("falcon"))); }, {}},
        {{},
         [&](auto& ts) {
           ts.push_back({"output.weight", io::GgmlType::F32, {64, 512}, ones.data()});
         }},
        {{}, [](auto& ts) { drop_tensor(ts, "position_embd.weight"); }},
    };
    QVERIFY(which < int(edits.size()));
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string dst = tmp.path().toStdString() + "/bad.gguf";
    write_edited(kGguf + file.toStdString(), dst, edits[which].first, edits[which].second);
    const QString err = error_of([&] { load_model(dst); });
    QVERIFY2(!err.isEmpty(), "expected an engine::Error");
    QVERIFY2(!err.startsWith("<non-engine"), qPrintable(err));
    QVERIFY2(err.contains(needle), qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TestGgufModel)
#include "test_gguf_model.moc"
