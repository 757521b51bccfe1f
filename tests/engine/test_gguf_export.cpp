// GGUF export and model conversion: HF fixtures -> GGUF -> load must give the logits of the HF
// model (exactly for GPT-2 f32, to rounding for Llama whose q/k rows are permuted into the
// interleaved layout, and to a per-type tolerance for f16 / q8_0 / q4_0), and the Llama logits must
// still match transformers' float64 logits; the file uses llama.cpp's names, types and metadata keys;
// tokenizers survive the trip (same ids); conversion writes atomically; perplexity windows and the
// KL / top-1 comparison behave as documented.
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/gguf.h"
#include "engine/io/gguf_export.h"
#include "engine/io/llmc_checkpoint.h"
#include "engine/io/model_convert.h"
#include "engine/io/safetensors.h"
#include "engine/model_loader.h"
#include "engine/perplexity.h"
#include "support/error_of.h"
#include "support/model_helpers.h"

using namespace engine;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(WB_TEST_DATA_DIR);

const std::vector<int32_t> kIds = {1, 7, 42, 300, 5, 99, 511, 0, 17, 256, 3, 64};

const char* const kTexts[] = {"Hello world", " the quick brown fox", "caf\xc3\xa9 \xe4\xb8\x96", "a\nb  c",
                              "12345 tokens!"};

std::vector<std::string> dir_listing(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<float> expected_logits(const std::string& dir, std::vector<int32_t>& ids_out) {
  auto expected = io::SafetensorsFile::open(dir + "/expected.safetensors");
  const io::StTensor* ids_t = expected->find("input_ids");
  const io::StTensor* logits_t = expected->find("logits");
  const uint64_t T = ids_t->shape[1], V = logits_t->shape[2];
  ids_out.resize(T);
  std::memcpy(ids_out.data(), ids_t->data, T * 4);  // first row
  std::vector<float> all = expected->read_f32(*logits_t);
  all.resize(T * V);
  return all;
}

// A small Llama with an untied head (4 heads over kv_heads, context 16), for random-weight export tests.
ModelConfig untied_llama(int layers, int width, int kv_heads, int ffn, int vocab) {
  ModelConfig c;
  c.arch = Arch::Llama;
  c.n_layer = layers, c.n_embd = width, c.n_head = 4, c.n_kv_head = kv_heads, c.ffn_dim = ffn, c.vocab_size = vocab;
  c.max_seq_len = 16;
  c.tie_embeddings = false;
  return c;
}

}  // namespace

class TestGgufExport : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

  std::string tmp(const std::string& name) { return m_tmp.path().toStdString() + "/" + name; }

 private slots:
  void initTestCase() { QVERIFY(m_tmp.isValid()); }

  void f32_round_trip_same_logits_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("tiny-gpt2") << "tiny-gpt2";
    QTest::newRow("tiny-llama") << "tiny-llama";
    QTest::newRow("tiny-qwen2") << "tiny-qwen2";
  }
  void f32_round_trip_same_logits() {
    QFETCH(QString, fixture);
    const std::string dir = kData + "/" + fixture.toStdString();
    auto hf = load_model(dir);
    const std::string path = tmp(fixture.toStdString() + "-f32.gguf");
    io::save_gguf(*hf, path, {});
    auto g = load_model(path);
    const ModelConfig &a = hf->config(), &b = g->config();
    QCOMPARE(b.arch, a.arch);
    QCOMPARE(b.n_layer, a.n_layer);
    QCOMPARE(b.n_embd, a.n_embd);
    QCOMPARE(b.n_head, a.n_head);
    QCOMPARE(b.n_kv_head, a.n_kv_head);
    QCOMPARE(b.ffn_dim, a.ffn_dim);
    QCOMPARE(b.vocab_size, a.vocab_size);
    QCOMPARE(b.max_seq_len, a.max_seq_len);
    QCOMPARE(b.norm_eps, a.norm_eps);
    QCOMPARE(b.qkv_bias, a.qkv_bias);
    QCOMPARE(b.tie_embeddings, a.tie_embeddings);
    if (a.arch == Arch::Llama) QCOMPARE(b.rope_theta, a.rope_theta);
    // Llama without biases becomes GGUF "llama": interleaved rows; Qwen2 keeps HF's layout.
    QCOMPARE(b.rope_interleaved, a.arch == Arch::Llama && !a.qkv_bias);
    const auto want = full_logits(*hf, *m_be, kIds), got = full_logits(*g, *m_be, kIds);
    const double d = max_abs_diff(want, got);
    qInfo("%s: f32 GGUF vs HF max |logit diff| %.3g", qPrintable(fixture), d);
    if (a.arch == Arch::GPT2 || !b.rope_interleaved) QCOMPARE(d, 0.0);  // the same numbers in the same order
    else QVERIFY2(d < 1e-5, qPrintable(QString::number(d)));            // rotary pairs summed in another order
    // And still the logits transformers computed (in float64) for the HF fixture.
    std::vector<int32_t> ids;
    const std::vector<float> ref = expected_logits(dir, ids);
    const double dr = max_abs_diff(full_logits(*g, *m_be, ids), ref);
    QVERIFY2(dr < 2e-4, qPrintable(QString::number(dr)));
  }

  void llama_rows_are_interleaved_in_the_file() {
    // attn_q row 2i+1 of head h in the file is HF row i + HS/2 (llama.cpp's permute), so the GGUF
    // differs from a plain copy and a loader assuming the other layout would get other logits.
    auto hf = load_model(kData + "/tiny-llama");
    const ModelConfig& c = hf->config();
    const auto tensors = io::gguf_export_tensors(*hf, {});
    const io::GgufExportTensor* q = nullptr;
    for (const auto& t : tensors)
      if (t.name == "blk.0.attn_q.weight") q = &t;
    QVERIFY(q);
    QCOMPARE(q->shape, (std::vector<uint64_t>{uint64_t(c.n_embd), uint64_t(c.n_embd)}));
    const float* file = reinterpret_cast<const float*>(q->bytes.data());
    const float* src = hf->param_data("h.wq.weight");
    const int HS = c.head_size(), C = c.n_embd;
    for (int h = 0; h < c.n_head; ++h)
      for (int i = 0; i < HS / 2; ++i) {
        QCOMPARE(std::memcmp(file + (h * HS + 2 * i) * C, src + (h * HS + i) * C, C * 4), 0);
        QCOMPARE(std::memcmp(file + (h * HS + 2 * i + 1) * C, src + (h * HS + i + HS / 2) * C, C * 4), 0);
      }
    QVERIFY(std::memcmp(file, src, size_t(C) * C * 4) != 0);
  }

  void gguf_hf_gguf_is_byte_identical() {
    // GGUF (interleaved) -> HF (rotate-half) -> GGUF (interleaved): the permutations are inverses.
    auto hf = load_model(kData + "/tiny-llama");
    const std::string g1 = tmp("rt1.gguf"), d = tmp("rt-hf"), g2 = tmp("rt2.gguf");
    io::save_gguf(*hf, g1, {});
    io::convert_model(g1, d, {io::ConvertTarget::Hf, io::ExportType::F32, ""});
    auto back = load_model(d);
    QCOMPARE(back->config().rope_interleaved, false);
    QCOMPARE(max_abs_diff(full_logits(*back, *m_be, kIds), full_logits(*hf, *m_be, kIds)), 0.0);
    io::save_gguf(*back, g2, {});
    auto f1 = io::GgufFile::open(g1), f2 = io::GgufFile::open(g2);
    QCOMPARE(f1->tensors().size(), f2->tensors().size());
    for (size_t i = 0; i < f1->tensors().size(); ++i) {
      const auto &a = f1->tensors()[i], &b = f2->tensors()[i];
      QCOMPARE(a.name, b.name);
      QCOMPARE(a.nbytes, b.nbytes);
      QVERIFY2(std::memcmp(a.data, b.data, a.nbytes) == 0, a.name.c_str());
    }
  }

  void quantized_logits_within_tolerance_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("type");
    QTest::addColumn<double>("tol");
    // Relative RMS logit error ||got - want|| / ||want||, bounded per format (f16: 11-bit mantissa;
    // q8_0: 8-bit blocks; q4_0: 4-bit blocks, the embedding kept at q8_0). A wrong layout or
    // scale gives errors of order 1, far above every bound.
    for (const char* f : {"tiny-gpt2", "tiny-llama", "tiny-qwen2"}) {
      QTest::newRow((std::string(f) + " f16").c_str()) << f << "f16" << 5e-3;
      QTest::newRow((std::string(f) + " q8_0").c_str()) << f << "q8_0" << 6e-2;
      QTest::newRow((std::string(f) + " q4_0").c_str()) << f << "q4_0" << 0.6;
      // Our own q4_1 / q5 quantizers (measured: q4_1 0.20-0.39, q5_0 0.11-0.27, q5_1 0.09-0.18).
      QTest::newRow((std::string(f) + " q4_1").c_str()) << f << "q4_1" << 0.6;
      QTest::newRow((std::string(f) + " q5_0").c_str()) << f << "q5_0" << 0.35;
      QTest::newRow((std::string(f) + " q5_1").c_str()) << f << "q5_1" << 0.35;
    }
  }
  void quantized_logits_within_tolerance() {
    QFETCH(QString, fixture);
    QFETCH(QString, type);
    QFETCH(double, tol);
    auto hf = load_model(kData + "/" + fixture.toStdString());
    io::GgufExportOptions o;
    o.type = *io::parse_export_type(type.toStdString());
    const std::string path = tmp(fixture.toStdString() + "-" + type.toStdString() + ".gguf");
    io::save_gguf(*hf, path, o);
    auto f = io::GgufFile::open(path);
    // Types: matrices as asked (4- and 5-bit embeddings at q8_0), 1-D tensors f32; general.file_type is
    // llama.cpp's number for the type.
    const std::map<QString, std::pair<io::GgmlType, uint32_t>> types = {{"f16", {io::GgmlType::F16, 1}},
                                                                        {"q8_0", {io::GgmlType::Q8_0, 7}},
                                                                        {"q4_0", {io::GgmlType::Q4_0, 2}},
                                                                        {"q4_1", {io::GgmlType::Q4_1, 3}},
                                                                        {"q5_0", {io::GgmlType::Q5_0, 8}},
                                                                        {"q5_1", {io::GgmlType::Q5_1, 9}}};
    const io::GgmlType want = types.at(type).first;
    const bool low_bits = want != io::GgmlType::F16 && want != io::GgmlType::Q8_0;
    for (const auto& t : f->tensors()) {
      if (t.shape.size() == 1) QCOMPARE(t.type, io::GgmlType::F32);
      else if (t.name == "token_embd.weight" || t.name == "output.weight" || t.name == "position_embd.weight")
        QCOMPARE(t.type, low_bits ? io::GgmlType::Q8_0 : want);
      else QCOMPARE(t.type, want);
    }
    QCOMPARE(f->get_u32("general.file_type"), types.at(type).second);
    auto g = load_model(path);
    const auto want_l = full_logits(*hf, *m_be, kIds), got = full_logits(*g, *m_be, kIds);
    double num = 0, den = 0;
    for (size_t i = 0; i < want_l.size(); ++i) {
      num += double(got[i] - want_l[i]) * (got[i] - want_l[i]);
      den += double(want_l[i]) * want_l[i];
    }
    const double d = std::sqrt(num / den);
    qInfo("%s %s: relative RMS logit error %.3g (max |diff| %.3g)", qPrintable(fixture), qPrintable(type), d,
          max_abs_diff(want_l, got));
    QVERIFY2(d < tol, qPrintable(QString::number(d)));
    QVERIFY(d > 0);  // it really was rounded
  }

  void rows_not_whole_blocks_fall_back() {
    // ffn_dim 48: ffn_down's rows (ne[0] = 48) are not whole 32-blocks -> f16; the others quantize.
    Model m(untied_llama(1, 64, 4, 48, 40));
    m.init_random(5);
    io::GgufExportOptions o;
    o.type = io::ExportType::Q4_0;
    for (const auto& t : io::gguf_export_tensors(m, o)) {
      if (t.name == "blk.0.ffn_down.weight") QCOMPARE(t.type, io::GgmlType::F16);
      if (t.name == "blk.0.ffn_up.weight") QCOMPARE(t.type, io::GgmlType::Q4_0);
    }
    const std::string path = tmp("fallback.gguf");
    io::save_gguf(m, path, o);
    auto g = load_model(path);
    QVERIFY(max_abs_diff(full_logits(m, *m_be, {1, 2, 3}), full_logits(*g, *m_be, {1, 2, 3})) < 0.05);
  }

  // q5_K needs rows of whole 256-weight blocks: a C = 256 Llama (random weights) takes it in every
  // matrix but ffn_down, whose 96-wide rows fall back to q5_1 as in llama.cpp's Q5_K_M; the embedding
  // and head take q8_0. Read back by our loader, with the weights kept in their file encodings and
  // widened to f32: the widened model is the exact dequantized weights (logits to f32 rounding of the
  // quantized model's, whose int8 activations cost up to 2%, as test_gguf_llamacpp_quant measures), and
  // both are within the quantization error of the f32 original.
  void q5_K_export_reads_back() {
    Model m(untied_llama(2, 256, 2, 96, 64));
    m.init_random(9);
    io::GgufExportOptions o;
    o.type = *io::parse_export_type("q5_k");
    QCOMPARE(o.type, io::ExportType::Q5_K);
    const std::string path = tmp("q5_K.gguf");
    io::save_gguf(m, path, o);
    auto f = io::GgufFile::open(path);
    QCOMPARE(f->get_u32("general.file_type"), 16u);
    int q5k = 0;
    for (const auto& t : f->tensors()) {
      if (t.shape.size() == 1) QCOMPARE(t.type, io::GgmlType::F32);
      else if (t.name == "token_embd.weight" || t.name == "output.weight") QCOMPARE(t.type, io::GgmlType::Q8_0);
      else if (t.name.ends_with("ffn_down.weight")) QCOMPARE(t.type, io::GgmlType::Q5_1);
      else {
        QCOMPARE(t.type, io::GgmlType::Q5_K);
        ++q5k;
      }
    }
    QCOMPARE(q5k, 2 * 6);  // q, k, v, output, gate, up per layer
    auto q = load_model(path);
    QVERIFY(q->has_external_weights());
    LoadOptions widen;
    widen.dequantize = true;
    auto w = load_model(path, {}, widen);
    const std::vector<int32_t> ids = {1, 7, 42, 13, 5, 60, 31, 0};
    const auto f32 = full_logits(m, *m_be, ids), exact = full_logits(*w, *m_be, ids), got = full_logits(*q, *m_be, ids);
    const double kernels = rel_diff(got, exact), quantization = rel_diff(exact, f32);
    qInfo("q5_K export: quantized kernels %.3g of the widened model's logits, widened %.3g of the f32 original's",
          kernels, quantization);
    QVERIFY2(kernels < 0.02, qPrintable(QString::number(kernels)));
    QVERIFY2(quantization < 0.1, qPrintable(QString::number(quantization)));
    QVERIFY(quantization > 0);
  }

  void metadata_uses_llama_cpp_keys() {
    auto g2 = load_model(kData + "/gguf/tiny-gpt2-f32.gguf");
    const io::GgufMetadata md = io::gguf_export_metadata(*g2, {io::ExportType::Q8_0, "x", std::string("{{ bos }}")});
    auto find = [&](const std::string& k) -> const io::GgufValue* {
      for (const auto& kv : md)
        if (kv.first == k) return &kv.second;
      return nullptr;
    };
    const ModelConfig& c = g2->config();
    QCOMPARE(find("general.architecture")->string(""), std::string("gpt2"));
    QCOMPARE(find("general.file_type")->scalar<uint32_t>(""), 7u);
    QCOMPARE(find("gpt2.context_length")->scalar<uint32_t>(""), uint32_t(c.max_seq_len));
    QCOMPARE(find("gpt2.embedding_length")->scalar<uint32_t>(""), uint32_t(c.n_embd));
    QCOMPARE(find("gpt2.block_count")->scalar<uint32_t>(""), uint32_t(c.n_layer));
    QCOMPARE(find("gpt2.feed_forward_length")->scalar<uint32_t>(""), uint32_t(c.ffn_dim));
    QCOMPARE(find("gpt2.attention.head_count")->scalar<uint32_t>(""), uint32_t(c.n_head));
    QCOMPARE(find("gpt2.attention.layer_norm_epsilon")->scalar<float>(""), c.norm_eps);
    QCOMPARE(find("tokenizer.ggml.model")->string(""), std::string("gpt2"));
    QCOMPARE(find("tokenizer.ggml.pre")->string(""),
             io::GgufFile::open(kData + "/gguf/tiny-gpt2-f32.gguf")->get_string("tokenizer.ggml.pre"));
    QCOMPARE(find("tokenizer.chat_template")->string(""), std::string("{{ bos }}"));
    QVERIFY(find("tokenizer.ggml.merges") && find("tokenizer.ggml.tokens") && find("tokenizer.ggml.token_type"));
    QVERIFY(!find("tokenizer.ggml.scores"));

    auto ll = load_model(kData + "/gguf/tiny-llama-f32.gguf");
    const io::GgufMetadata ml = io::gguf_export_metadata(*ll, {});
    auto findl = [&](const std::string& k) -> const io::GgufValue* {
      for (const auto& kv : ml)
        if (kv.first == k) return &kv.second;
      return nullptr;
    };
    QCOMPARE(findl("general.architecture")->string(""), std::string("llama"));
    QCOMPARE(findl("llama.attention.head_count_kv")->scalar<uint32_t>(""), uint32_t(ll->config().n_kv_head));
    QCOMPARE(findl("llama.attention.layer_norm_rms_epsilon")->scalar<float>(""), ll->config().norm_eps);
    QCOMPARE(findl("llama.rope.freq_base")->scalar<float>(""), ll->config().rope_theta);
    QCOMPARE(findl("tokenizer.ggml.model")->string(""), std::string("llama"));
    QVERIFY(findl("tokenizer.ggml.scores") && !findl("tokenizer.ggml.merges") && !findl("tokenizer.chat_template"));
    QCOMPARE(findl("tokenizer.ggml.bos_token_id")->scalar<uint32_t>(""), uint32_t(*ll->tokenizer()->bos_id()));
  }

  void tokenizer_survives_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("gpt2 byte-level BPE") << "tiny-gpt2-f32.gguf";
    QTest::newRow("llama SPM") << "tiny-llama-f32.gguf";
  }
  void tokenizer_survives() {
    QFETCH(QString, file);
    auto src = load_model(kData + "/gguf/" + file.toStdString());
    QVERIFY(src->tokenizer());
    const std::string path = tmp("tok-" + file.toStdString());
    io::save_gguf(*src, path, {io::ExportType::Q8_0, "", std::nullopt});
    auto back = load_model(path);
    const Tokenizer *a = src->tokenizer(), *b = back->tokenizer();
    QVERIFY(b);
    QCOMPARE(b->vocab_size(), a->vocab_size());
    QCOMPARE(b->bos_id(), a->bos_id());
    QCOMPARE(b->eos_id(), a->eos_id());
    for (const char* s : kTexts) {
      QCOMPARE(b->encode(s), a->encode(s));
      QCOMPARE(b->encode(s, true), a->encode(s, true));
    }
    for (int32_t id = 0; id < a->vocab_size(); ++id) QCOMPARE(b->token_piece(id), a->token_piece(id));
  }

  void hf_tokenizers_survive_gguf() {
    // tokenizer.json (Llama-3 split pattern, added tokens) and GPT-2 vocab.json + merges.txt tokenizers
    // attached to small models, through GGUF; the model's vocabulary is larger (padded) than the
    // tokenizer's, as GPT-2 checkpoints often are.
    ModelConfig c;
    c.arch = Arch::GPT2;
    c.n_layer = 1, c.n_embd = 32, c.n_head = 2, c.n_kv_head = 2, c.ffn_dim = 128, c.vocab_size = 710,
    c.max_seq_len = 16;
    Model m(c);
    m.init_random(3);
    m.set_tokenizer(Tokenizer::from_tokenizer_json(kData + "/tokenizer/tiny_llama3.json"));
    const std::string path = tmp("tok-json.gguf");
    io::save_gguf(m, path, {});
    QCOMPARE(io::GgufFile::open(path)->get_string("tokenizer.ggml.pre"), std::string("llama-bpe"));
    auto back = load_model(path);
    QVERIFY(back->tokenizer());
    QCOMPARE(back->tokenizer()->vocab_size(), 710);  // padded to the embedding rows
    QCOMPARE(back->tokenizer()->token_piece(705), std::string("[PAD705]"));
    for (const char* s : kTexts) QCOMPARE(back->tokenizer()->encode(s), m.tokenizer()->encode(s));
    QCOMPARE(back->tokenizer()->encode("<|end_of_text|>", true), m.tokenizer()->encode("<|end_of_text|>", true));
    QCOMPARE(back->tokenizer()->encode("<|end_of_text|>"), m.tokenizer()->encode("<|end_of_text|>"));
    // Not GPT-2's split pattern: no vocab.json / merges.txt can describe it, a tokenizer.json can.
    QVERIFY(!io::write_gpt2_tokenizer_files(*back->tokenizer(), tmp("")));
    const std::string tj = tmp("tok-json-dir");
    fs::create_directories(tj);
    QVERIFY(io::write_tokenizer_json(*back->tokenizer(), tj));
    auto from_json = Tokenizer::from_tokenizer_json(tj + "/tokenizer.json");
    for (const char* s : kTexts) QCOMPARE(from_json->encode(s), m.tokenizer()->encode(s));
    QCOMPARE(from_json->encode("<|end_of_text|>", true), m.tokenizer()->encode("<|end_of_text|>", true));
    QCOMPARE(from_json->encode("<|end_of_text|>"), m.tokenizer()->encode("<|end_of_text|>"));
    QCOMPARE(from_json->eos_id(), m.tokenizer()->eos_id());

    // GPT-2's own files -> GGUF -> vocab.json + merges.txt -> the same ids.
    const std::string gpt2 = kData + "/../../resources/tokenizers/gpt2";
    c.vocab_size = 50257;
    Model g(c);
    g.init_random(4);
    g.set_tokenizer(Tokenizer::from_gpt2_files(gpt2 + "/vocab.json", gpt2 + "/merges.txt"));
    const std::string gp = tmp("gpt2-tok.gguf");
    io::save_gguf(g, gp, {});
    auto gb = load_model(gp);
    const std::string d = tmp("tok-files");
    fs::create_directories(d);
    QVERIFY(io::write_gpt2_tokenizer_files(*gb->tokenizer(), d));
    auto files = Tokenizer::from_gpt2_files(d + "/vocab.json", d + "/merges.txt");
    for (const char* s : kTexts) {
      QCOMPARE(gb->tokenizer()->encode(s), g.tokenizer()->encode(s));
      QCOMPARE(files->encode(s), g.tokenizer()->encode(s));
    }
    QCOMPARE(files->eos_id(), g.tokenizer()->eos_id());

    // HF ByteLevel add_prefix_space cannot be said in GGUF: refused, not silently changed.
    c.vocab_size = 700;
    Model p(c);
    p.set_tokenizer(Tokenizer::from_tokenizer_json(kData + "/tokenizer/tiny_bytelevel.json"));
    QVERIFY(error_of([&] { io::save_gguf(p, tmp("prefix.gguf"), {}); }).contains("prefix space"));
  }

  void tokenizer_larger_than_model_is_an_error() {
    ModelConfig c;
    c.arch = Arch::GPT2;
    c.n_layer = 1, c.n_embd = 32, c.n_head = 2, c.n_kv_head = 2, c.ffn_dim = 128, c.vocab_size = 8, c.max_seq_len = 8;
    Model m(c);
    m.set_tokenizer(Tokenizer::from_tokenizer_json(kData + "/tokenizer/tiny_bytelevel.json"));
    const std::string path = tmp("too-small.gguf");
    QVERIFY(error_of([&] { io::save_gguf(m, path, {}); }).contains("more than the model"));
    QVERIFY(!fs::exists(path));
  }

  void failed_write_leaves_nothing() {
    auto m = load_model(kData + "/tiny-gpt2");
    // A missing directory: an error naming the path, and no file or temp file anywhere.
    const std::string d = tmp("atomic");
    fs::create_directories(d);
    const QString e = error_of([&] { io::save_gguf(*m, d + "/missing/x.gguf", {}); });
    QVERIFY2(e.contains("missing"), qPrintable(e));
    QVERIFY(dir_listing(d).empty());
    // An existing file is untouched when the export fails before writing (tokenizer too large).
    { std::ofstream(d + "/keep.gguf") << "old"; }
    ModelConfig c = m->config();
    c.vocab_size = 8;
    Model small(c);
    small.set_tokenizer(Tokenizer::from_tokenizer_json(kData + "/tokenizer/tiny_bytelevel.json"));
    QVERIFY(!error_of([&] { io::save_gguf(small, d + "/keep.gguf", {}); }).isEmpty());
    std::ifstream in(d + "/keep.gguf");
    std::string s;
    in >> s;
    QCOMPARE(s, std::string("old"));
    QCOMPARE(dir_listing(d), std::vector<std::string>{"keep.gguf"});
    // convert_model to HF: a non-empty destination is refused, nothing is written or removed.
    const std::string hf = d + "/hf";
    fs::create_directories(hf);
    { std::ofstream(hf + "/mine.txt") << "x"; }
    QVERIFY(error_of([&] {
              io::convert_model(kData + "/tiny-gpt2", hf, {io::ConvertTarget::Hf, io::ExportType::F32, ""});
            }).contains("not empty"));
    QCOMPARE(dir_listing(hf), std::vector<std::string>{"mine.txt"});
    QCOMPARE(dir_listing(d), (std::vector<std::string>{"hf", "keep.gguf"}));
    // A missing source: an error, nothing written.
    QVERIFY(error_of([&] { io::convert_model(d + "/nope", d + "/y.gguf", {}); }).contains("no such file"));
    QCOMPARE(dir_listing(d), (std::vector<std::string>{"hf", "keep.gguf"}));
  }

  void llmc_checkpoint_converts() {
    auto m = load_model(kData + "/tiny-gpt2");
    const ModelConfig& c = m->config();
    io::LlmcCheckpoint ck;
    ck.max_seq_len = c.max_seq_len, ck.vocab_size = c.vocab_size, ck.padded_vocab_size = c.vocab_size;
    ck.num_layers = c.n_layer, ck.num_heads = c.n_head, ck.channels = c.n_embd;
    for (size_t i = 0; i < m->params().size(); ++i) {
      const float* p = m->param_data(m->params()[i].name);
      ck.tensors[i].assign(p, p + m->params()[i].numel);
    }
    const std::string bin = tmp("tiny.bin"), out = tmp("from-llmc.gguf");
    io::write_llmc_checkpoint(bin, ck);
    QCOMPARE(io::convert_model(bin, out, {}).source_format, std::string("llm.c"));
    auto g = load_model(out);
    QCOMPARE(max_abs_diff(full_logits(*m, *m_be, kIds), full_logits(*g, *m_be, kIds)), 0.0);
  }

  void quantized_gguf_converts() {
    // A downloaded GGUF is usually quantized: convert widens it (the writers read f32), and the HF
    // copy computes exactly what the widened GGUF does.
    const std::string q = kData + "/gguf/tiny-qwen2-q8_0.gguf", d = tmp("from-q8-hf"), g = tmp("from-q8.gguf");
    io::convert_model(q, d, {io::ConvertTarget::Hf, io::ExportType::F32, ""});
    io::convert_model(q, g, {io::ConvertTarget::Gguf, io::ExportType::F16, ""});
    LoadOptions wide;
    wide.dequantize = true;
    const auto want = full_logits(*load_model(q, {}, wide), *m_be, kIds);
    QCOMPARE(max_abs_diff(full_logits(*load_model(d), *m_be, kIds), want), 0.0);
    QVERIFY(max_abs_diff(full_logits(*load_model(g), *m_be, kIds), want) < 0.05);
    // The writers also take a model whose weights stay in the file: they widen a layer at a time.
    auto kept = load_model(q);
    QCOMPARE(kept->weight("h.wq.weight", 1).dtype, DType::Q8_0);
    const std::string d2 = tmp("kept-hf"), g2 = tmp("kept.gguf");
    save_hf_directory(*kept, d2, "", "{}");
    io::save_gguf(*kept, g2, {io::ExportType::F32, "", std::nullopt});
    QCOMPARE(max_abs_diff(full_logits(*load_model(d2), *m_be, kIds), want), 0.0);
    QCOMPARE(max_abs_diff(full_logits(*load_model(g2), *m_be, kIds), want), 0.0);
  }

  void hf_f16_weights_round_the_f32_values_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("tiny-gpt2") << "tiny-gpt2";
    QTest::newRow("tiny-llama") << "tiny-llama";
  }
  void hf_f16_weights_round_the_f32_values() {
    // HF safetensors in f16: every weight is its f32 value rounded to nearest even (so loading widens back
    // to exactly that), the file is about half the size, and the logits stay close to the f32 model's.
    QFETCH(QString, fixture);
    const std::string src = kData + "/" + fixture.toStdString(), f32 = tmp(fixture.toStdString() + "-hf32"),
                      f16 = tmp(fixture.toStdString() + "-hf16");
    io::convert_model(src, f32, {io::ConvertTarget::Hf, io::ExportType::F32, ""});
    io::convert_model(src, f16, {io::ConvertTarget::Hf, io::ExportType::F16, ""});
    const auto a = io::SafetensorsFile::open(f32 + "/model.safetensors");
    const auto b = io::SafetensorsFile::open(f16 + "/model.safetensors");
    QCOMPARE(b->tensors().size(), a->tensors().size());
    for (const io::StTensor& t : a->tensors()) {
      const io::StTensor* h = b->find(t.name);
      QVERIFY2(h && h->dtype == io::StDType::F16 && h->shape == t.shape, t.name.c_str());
      const std::vector<float> wide = a->read_f32(t), narrow = b->read_f32(*h);
      for (size_t i = 0; i < wide.size(); ++i)
        if (narrow[i] != fp16_to_f32(f32_to_fp16(wide[i]))) QFAIL((t.name + " element " + std::to_string(i)).c_str());
    }
    const auto size = [](const std::string& d) { return std::filesystem::file_size(d + "/model.safetensors"); };
    QVERIFY2(size(f16) < size(f32) * 0.55, qPrintable(QString::number(size(f16))));
    const double d =
        max_abs_diff(full_logits(*load_model(f32), *m_be, kIds), full_logits(*load_model(f16), *m_be, kIds));
    QVERIFY2(d < 0.02, qPrintable(QString::number(d)));
    // Quantized types are GGUF's: an HF destination refuses them before writing anything.
    QVERIFY_THROWS_EXCEPTION(Error,
                             io::convert_model(src, tmp("hf-q8"), {io::ConvertTarget::Hf, io::ExportType::Q8_0, ""}));
    QVERIFY(!std::filesystem::exists(tmp("hf-q8")));
  }

  void hf_f16_refuses_values_beyond_its_range() {
    auto m = load_model(kData + "/tiny-llama");
    m->param_data("norm.weight")[3] = 70000.0f;
    try {
      save_hf_directory(*m, tmp("too-big"), "", "{}", HfWeightType::F16);
      QFAIL("a weight of 70000 was written as f16");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("model.norm.weight") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("65504") != std::string::npos, e.what());
    }
    QVERIFY(!std::filesystem::exists(tmp("too-big/model.safetensors")));
  }

  void chat_template_travels() {
    // GGUF (with a template) -> GGUF keeps tokenizer.chat_template; GGUF -> HF puts it in
    // tokenizer_config.json; HF -> GGUF reads it back from there.
    auto m = load_model(kData + "/gguf/tiny-gpt2-f32.gguf");
    const std::string tmpl = "{% for m in messages %}{{ m.content }}{% endfor %}";
    const std::string a = tmp("tmpl-a.gguf"), b = tmp("tmpl-b.gguf"), d = tmp("tmpl-hf"), c = tmp("tmpl-c.gguf");
    io::save_gguf(*m, a, {io::ExportType::F32, "", tmpl});
    io::convert_model(a, b, {io::ConvertTarget::Gguf, io::ExportType::Q8_0, ""});
    QCOMPARE(io::GgufFile::open(b)->get_string("tokenizer.chat_template"), tmpl);
    io::convert_model(a, d, {io::ConvertTarget::Hf, io::ExportType::F32, ""});
    QCOMPARE(io::read_chat_template(d), std::optional<std::string>(tmpl));
    io::convert_model(d, c, {});
    QCOMPARE(io::GgufFile::open(c)->get_string("tokenizer.chat_template"), tmpl);
    // This fixture's pre-tokenizer is Qwen2's: a tokenizer.json, not vocab.json, and the same ids.
    QVERIFY(!fs::exists(d + "/vocab.json"));
    auto hf_tok = load_model(d);
    QVERIFY(hf_tok->tokenizer());
    for (const char* s : kTexts) QCOMPARE(hf_tok->tokenizer()->encode(s), m->tokenizer()->encode(s));
  }

  void infer_target_from_extension() {
    QCOMPARE(io::infer_convert_target("a/b.gguf"), io::ConvertTarget::Gguf);
    QCOMPARE(io::infer_convert_target("a/B.GGUF"), io::ConvertTarget::Gguf);
    QCOMPARE(io::infer_convert_target("a/model-dir"), io::ConvertTarget::Hf);
    QVERIFY(!io::parse_export_type("q4_K"));
    QVERIFY(!io::parse_export_type("q5_K_M"));
    QCOMPARE(*io::parse_export_type("q5_K"), io::ExportType::Q5_K);
    QCOMPARE(*io::parse_export_type("Q4_1"), io::ExportType::Q4_1);
    QCOMPARE(*io::parse_export_type("q4_0"), io::ExportType::Q4_0);
  }

  void perplexity_windows_and_reference() {
    auto m = load_model(kData + "/tiny-llama");
    std::vector<int32_t> ids;
    for (int i = 0; i < 23; ++i) ids.push_back((i * 37 + 11) % m->config().vocab_size);
    // Windows of 10: [0,10) [10,20) [20,23) -> 9 + 9 + 2 predicted tokens.
    const PerplexityResult r = evaluate_perplexity(*m, *m_be, ids, 10);
    QCOMPARE(r.n, uint64_t(20));
    QCOMPARE(r.windows, 3);
    // The same number by hand from full forwards of each window.
    double nll = 0;
    for (size_t b = 0; b < ids.size(); b += 10) {
      std::vector<int32_t> w(ids.begin() + b, ids.begin() + std::min(ids.size(), b + 10));
      const auto lg = full_logits(*m, *m_be, w);
      const size_t V = m->config().vocab_size;
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        double mx = -1e30, s = 0;
        for (size_t v = 0; v < V; ++v) mx = std::max(mx, double(lg[i * V + v]));
        for (size_t v = 0; v < V; ++v) s += std::exp(double(lg[i * V + v]) - mx);
        nll -= double(lg[i * V + w[i + 1]]) - mx - std::log(s);
      }
    }
    qInfo("nll %.12g by hand %.12g", r.nll, nll / 20);
    QVERIFY(std::abs(r.nll - nll / 20) < 1e-6);  // f32 logits from differently sized forwards
    QVERIFY(std::abs(r.perplexity - std::exp(nll / 20)) < 1e-6 * r.perplexity);
    QVERIFY(!r.kl_vs_reference);
    // Against itself: KL 0, full agreement. Against a q4_0 copy: KL > 0.
    const PerplexityResult self = evaluate_perplexity(*m, *m_be, ids, 10, m.get(), m_be.get());
    QCOMPARE(*self.kl_vs_reference, 0.0);
    QCOMPARE(*self.top1_agreement, 1.0);
    const std::string q = tmp("ppl-q4.gguf");
    io::save_gguf(*m, q, {io::ExportType::Q4_0, "", std::nullopt});
    auto mq = load_model(q);
    const PerplexityResult rq = evaluate_perplexity(*mq, *m_be, ids, 10, m.get(), m_be.get());
    QVERIFY(*rq.kl_vs_reference > 0);
    QVERIFY(*rq.top1_agreement <= 1.0);
    QCOMPARE(*rq.reference_perplexity, r.perplexity);
    // Errors.
    QVERIFY(error_of([&] { evaluate_perplexity(*m, *m_be, ids, 1); }).contains("at least 2"));
    QVERIFY(error_of([&] { evaluate_perplexity(*m, *m_be, ids, m->config().max_seq_len + 1); }).contains("exceeds"));
    QVERIFY(error_of([&] { evaluate_perplexity(*m, *m_be, std::vector<int32_t>{1}, 10); }).contains("fewer than 2"));
  }
};

QTEST_GUILESS_MAIN(TestGgufExport)
#include "test_gguf_export.moc"
