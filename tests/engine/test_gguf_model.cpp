// GGUF models through load_model: tiny GPT-2 / Llama / Qwen2 files written by gguf-py from the HF
// fixtures (tests/tools/make_gguf_model_fixture.py, llama.cpp's naming and q/k permutation) must give
// the logits of the same models loaded from their HF directories, with equal configs; their
// tokenizers (GGUF "gpt2" byte-level BPE and "llama" SPM vocabularies) must encode as expected, also
// from a vocabulary-only file; a GPT-2 output.weight is the tied head when it is a byte copy of
// token_embd and an untied lm_head otherwise (tiny-gpt2-untied-q8_0.gguf against numpy's logits, by
// tests/tools/make_gguf_gpt2_head_fixture.py), which inference and training both use; and
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

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/io/gguf_export.h"
#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "engine/train/adamw.h"
#include "engine/train/train_model.h"
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

  void gpt2_untied_head_matches_reference_data() {
    QTest::addColumn<bool>("dequantize");
    QTest::addColumn<bool>("pack");
    QTest::addColumn<double>("tolerance");  // max |logit diff| / max |logit|
    // Widened or file-layout q8_0: f32 arithmetic on exactly the dequantized weights (measured ~1e-6).
    QTest::newRow("widened") << true << true << 1e-4;
    QTest::newRow("q8_0 in place, file layout") << false << false << 1e-4;
    // The packed q8_0 kernels round activations to int8 per 32 values (measured ~0.5%).
    QTest::newRow("q8_0 in place, packed") << false << true << 0.05;
  }
  void gpt2_untied_head_matches_reference() {
    QFETCH(bool, dequantize);
    QFETCH(bool, pack);
    QFETCH(double, tolerance);
    const QJsonObject j = read_json(kGguf + "tiny-gpt2-untied.json");
    std::vector<int32_t> ids;
    for (const auto& v : j["ids"].toArray()) ids.push_back(v.toInt());
    std::vector<float> want;
    for (const auto& row : j["logits"].toArray())
      for (const auto& v : row.toArray()) want.push_back(float(v.toDouble()));
    QCOMPARE(int(ids.size()), 10);
    LoadOptions o;
    o.dequantize = dequantize;
    o.pack = pack;
    auto m = load_model(kGguf + "tiny-gpt2-untied-q8_0.gguf", {}, o);
    QCOMPARE(m->config().arch, Arch::GPT2);
    QVERIFY(!m->config().tie_embeddings);
    QVERIFY(!arch_spec(m->config()).tied_head);
    QVERIFY(m->has_param("lm_head.weight"));
    QCOMPARE(m->weight("lm_head.weight").dtype, dequantize ? DType::F32 : DType::Q8_0);
    const std::vector<float> got = full_logits(*m, *m_be, ids);
    QCOMPARE(got.size(), want.size());
    double scale = 0;
    for (float v : want) scale = std::max(scale, double(std::abs(v)));
    const double rel = max_abs_diff(got, want) / scale;
    qInfo("untied GPT-2 head: max |logit diff| / max |logit| = %.3g", rel);
    QVERIFY2(rel < tolerance, qPrintable(QString::number(rel)));
  }

  // Training an untied GPT-2 head: the head's gradient goes to lm_head.weight (not wte), as a central
  // difference of the loss confirms, and AdamW steps lower the loss.
  void gpt2_untied_head_trains() {
    auto m = load_model(kGguf + "tiny-gpt2-untied-q8_0.gguf", {}, LoadOptions{.dequantize = true});
    const std::vector<int32_t> inputs = {5, 17, 99, 3, 64, 127, 0, 42}, targets = {17, 99, 3, 64, 127, 0, 42, -1};
    const BatchView batch{inputs.data(), targets.data(), nullptr, 1, 8};
    TrainModel tm(*m, *m_be);
    const float loss0 = tm.forward_backward(batch, {});
    const TrainableTensor* head = nullptr;
    for (const auto& t : tm.trainable())
      if (t.name == "lm_head.weight") head = &t;
    QVERIFY(head);
    for (const uint64_t i : {uint64_t(17 * 64 + 3), uint64_t(99 * 64 + 40), uint64_t(5 * 64 + 1)}) {
      const float keep = head->value[i], h = 1e-2f;
      head->value[i] = keep + h;
      const float up = tm.loss(batch);
      head->value[i] = keep - h;
      const float down = tm.loss(batch);
      head->value[i] = keep;
      const double numeric = (double(up) - down) / (2 * h);
      QVERIFY2(std::abs(numeric - head->grad[i]) < 2e-3 + 0.05 * std::abs(numeric),
               qPrintable(QString("d loss / d lm_head[%1]: %2 vs %3").arg(i).arg(head->grad[i]).arg(numeric)));
    }
    AdamW opt(tm.trainable(), AdamWParams{0.9, 0.95, 1e-8, 0.0});
    float loss = loss0;
    for (int step = 0; step < 5; ++step) {
      tm.zero_grads();
      loss = tm.forward_backward(batch, {});
      opt.step(1e-2f);
    }
    QVERIFY2(loss < loss0, qPrintable(QString("%1 -> %2").arg(loss0).arg(loss)));
  }

  // An untied GPT-2 head survives both our export formats: GGUF (output.weight) and HF
  // (lm_head.weight with tie_word_embeddings false).
  void gpt2_untied_head_round_trips() {
    auto m = load_model(kGguf + "tiny-gpt2-untied-q8_0.gguf", {}, LoadOptions{.dequantize = true});
    const std::vector<int32_t> ids = {1, 2, 3, 100, 50};
    const std::vector<float> want = full_logits(*m, *m_be, ids);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string gguf = tmp.path().toStdString() + "/untied.gguf", hf = tmp.path().toStdString() + "/hf";
    io::save_gguf(*m, gguf, {});
    save_hf_directory(*m, hf, "", "{}");
    for (const std::string& path : {gguf, hf}) {
      auto back = load_model(path);
      QVERIFY2(!back->config().tie_embeddings, path.c_str());
      QVERIFY2(max_abs_diff(full_logits(*back, *m_be, ids), want) < 1e-5, path.c_str());
    }
  }

  // llama.cpp needs output.weight for gpt2: our export writes the tied head as a byte copy of
  // token_embd, which reads back as tied (no second matrix). A head in another encoding than the
  // embedding (llama-quantize: q6_K head, q4_0 embedding) is an untied head, used as stored.
  void gpt2_output_weight_tied_or_untied() {
    auto hf = load_model(kData + "/tiny-gpt2");
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::vector<int32_t> ids = {7, 300, 12, 511, 0, 64};
    const std::vector<float> want = full_logits(*hf, *m_be, ids);
    for (const io::ExportType type : {io::ExportType::F32, io::ExportType::Q8_0}) {
      const std::string path = tmp.path().toStdString() + "/tied-" + io::export_type_name(type) + ".gguf";
      io::GgufExportOptions o;
      o.type = type;
      io::save_gguf(*hf, path, o);
      auto f = io::GgufFile::open(path);
      const io::GgufTensor* head = f->find("output.weight");
      const io::GgufTensor* embd = f->find("token_embd.weight");
      QVERIFY(head && embd);
      QCOMPARE(head->type, embd->type);
      QCOMPARE(head->shape, embd->shape);
      QVERIFY(std::memcmp(head->data, embd->data, head->nbytes) == 0);
      auto back = load_model(path);
      QVERIFY(back->config().tie_embeddings);
      QVERIFY(!back->has_param("lm_head.weight"));
      if (type == io::ExportType::F32) QVERIFY(max_abs_diff(full_logits(*back, *m_be, ids), want) < 1e-5);
    }
    // The same head stored as f16 next to the f32 embedding: untied, f16, and (being the same values
    // up to f16 rounding) nearly the same logits.
    const std::string mixed = tmp.path().toStdString() + "/mixed.gguf";
    std::vector<uint16_t> head16;
    write_edited(kGguf + "tiny-gpt2-f32.gguf", mixed, {}, [&](auto& ts) {
      for (const auto& t : ts)
        if (t.name == "token_embd.weight") {
          const auto* w = static_cast<const float*>(t.data);
          for (uint64_t i = 0; i < t.shape[0] * t.shape[1]; ++i) head16.push_back(f32_to_fp16(w[i]));
          ts.push_back({"output.weight", io::GgmlType::F16, t.shape, head16.data()});
          break;
        }
    });
    auto untied = load_model(mixed);
    QVERIFY(!untied->config().tie_embeddings);
    QCOMPARE(untied->weight("lm_head.weight").dtype, DType::F16);
    const double d = max_abs_diff(full_logits(*untied, *m_be, ids), want);
    QVERIFY2(d > 0 && d < 1e-2, qPrintable(QString::number(d)));
    // Old files without output.weight still read as tied.
    QVERIFY(load_model(kGguf + "tiny-gpt2-f32.gguf")->config().tie_embeddings);
  }

  // The tokenizer alone, as `tokenize` reads it: from a vocabulary-only GGUF (no tensors at all),
  // which is not a loadable model.
  void vocab_only_gguf_tokenizer() {
    const QJsonObject j = read_json(kGguf + "tokens.json");
    std::vector<int32_t> want;
    for (const auto& v : j["bpe_ids"].toArray()) want.push_back(v.toInt());
    const std::string vocab = kGguf + "vocab-only-gpt2.gguf";
    QVERIFY(io::GgufFile::open(vocab)->tensors().empty());
    auto t = load_model_tokenizer(vocab);
    QVERIFY(t);
    QCOMPARE(t->vocab_size(), 512);
    QCOMPARE(t->encode(j["sample"].toString().toStdString()), want);
    QVERIFY(error_of([&] { load_model(vocab); }).contains("no tensors (a vocabulary-only GGUF"));
    // A full model file gives the same tokenizer; a GGUF without tokenizer keys gives none.
    QCOMPARE(load_model_tokenizer(kGguf + "tiny-gpt2-f32.gguf")->encode(j["sample"].toString().toStdString()), want);
    QVERIFY(load_model_tokenizer(kGguf + "tiny-gpt2-untied-q8_0.gguf") == nullptr);
  }

  // A file named .gguf that is not one is reported as such by the GGUF reader, with the bytes seen.
  void misnamed_gguf_says_bad_magic() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string path = tmp.path().toStdString() + "/model.gguf";
    {
      QFile f(QString::fromStdString(path));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("PK\x03\x04 a zip archive, not a model");
    }
    for (const QString& err : {error_of([&] { load_model(path); }), error_of([&] { load_model_tokenizer(path); })}) {
      QVERIFY2(err.contains("not a GGUF file"), qPrintable(err));
      QVERIFY2(err.contains("bad magic 'PK"), qPrintable(err));
      QVERIFY2(!err.contains("unknown model format"), qPrintable(err));
    }
    // Without the .gguf name the same bytes are an unknown format.
    const std::string other = tmp.path().toStdString() + "/model.bin";
    QVERIFY(QFile::copy(QString::fromStdString(path), QString::fromStdString(other)));
    QVERIFY(error_of([&] { load_model(other); }).contains("unknown model format"));
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
    QTest::newRow("gpt2 output head of the wrong shape") << G << i++ << "output.weight has shape [64, 511]";
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
           ts.push_back({"output.weight", io::GgmlType::F32, {64, 511}, ones.data()});
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
