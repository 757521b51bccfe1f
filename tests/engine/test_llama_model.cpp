// The Llama-family forward pass (RMSNorm, rotary positions, SwiGLU, grouped-query attention, tied and
// untied heads, Qwen2's q/k/v biases) against an independent implementation, the KV cache against the
// full forward, both rotary layouts, and the loader's errors.
//
// tests/data/tiny-llama/ (untied head) and tests/data/tiny-qwen2/ (tied head, q/k/v biases, theta 1e6)
// hold tiny models (2 layers, 64 wide, 4 query heads over 2 key/value heads, vocab 512) written by
// Hugging Face transformers with the logits PyTorch computed in float64
// (tests/tools/make_tiny_llama_fixture.py).
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/error.h"
#include "engine/io/safetensors.h"
#include "engine/kv_cache.h"
#include "engine/model_loader.h"
#include "support/model_helpers.h"

namespace fs = std::filesystem;
using namespace engine;

namespace {

const std::string kData = std::string(WB_TEST_DATA_DIR);

// Copies every parameter of `src` into a new model of config `c` (same layout), then lets `edit` change it.
std::unique_ptr<Model> copy_model(const Model& src, const ModelConfig& c) {
  auto m = std::make_unique<Model>(c);
  for (const auto& p : src.params()) {
    const float* d = src.param_data(p.name);
    std::copy(d, d + p.numel, m->param_data(p.name));
  }
  return m;
}

// Writes `text` as config.json beside a copy of `dir`'s model.safetensors.
void write_config(const QTemporaryDir& tmp, const std::string& dir, const std::string& text) {
  fs::copy_file(dir + "/model.safetensors", tmp.path().toStdString() + "/model.safetensors");
  std::ofstream(tmp.path().toStdString() + "/config.json") << text;
}

// A valid tiny-llama config.json with `extra` fields appended (later duplicates are refused by the
// JSON reader, so `extra` only adds fields).
std::string llama_config(const std::string& extra, int kv_heads = 2, const std::string& type = "llama") {
  return R"({"model_type":")" + type + R"(","hidden_size":64,"intermediate_size":160,"num_hidden_layers":2,)" +
         R"("num_attention_heads":4,"num_key_value_heads":)" + std::to_string(kv_heads) +
         R"(,"vocab_size":512,"max_position_embeddings":64,"rms_norm_eps":1e-5,"rope_theta":10000.0,)" +
         R"("tie_word_embeddings":false)" + extra + "}";
}

}  // namespace

class TestLlamaModel : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void logits_match_transformers_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("tiny-llama") << "tiny-llama";
    QTest::newRow("tiny-qwen2") << "tiny-qwen2";
  }
  void logits_match_transformers() {
    QFETCH(QString, fixture);
    const std::string dir = kData + "/" + fixture.toStdString();
    auto model = load_model(dir);
    const ModelConfig& c = model->config();
    QCOMPARE(c.arch, Arch::Llama);
    QCOMPARE(arch_name(c.arch), std::string("llama"));
    QCOMPARE(c.n_head, 4);
    QCOMPARE(c.n_kv_head, 2);  // grouped-query attention
    QCOMPARE(c.ffn_dim, 160);
    const bool qwen2 = fixture == "tiny-qwen2";
    QCOMPARE(c.qkv_bias, qwen2);
    QCOMPARE(c.tie_embeddings, qwen2);
    QCOMPARE(model->has_param("lm_head.weight"), !qwen2);
    QCOMPARE(c.rope_theta, qwen2 ? 1e6f : 1e4f);
    QCOMPARE(c.parameter_count(), uint64_t(model->all_params().size()));

    auto expected = io::SafetensorsFile::open(dir + "/expected.safetensors");
    const io::StTensor* ids_t = expected->find("input_ids");
    const io::StTensor* logits_t = expected->find("logits");
    QVERIFY(ids_t && logits_t);
    const uint64_t B = ids_t->shape[0], T = ids_t->shape[1], V = logits_t->shape[2];
    std::vector<int32_t> ids(B * T);
    std::memcpy(ids.data(), ids_t->data, ids.size() * 4);
    const std::vector<float> want = expected->read_f32(*logits_t);
    for (uint64_t b = 0; b < B; ++b) {
      std::vector<int32_t> row(ids.begin() + b * T, ids.begin() + (b + 1) * T);
      const auto got = full_logits(*model, *m_be, row);
      const double d = max_abs_diff(got, std::span<const float>(want).subspan(b * T * V, T * V));
      qInfo("%s batch %d: max |logit diff| vs transformers %.3g", qPrintable(fixture), int(b), d);
      QVERIFY2(d < 2e-4, qPrintable(QString("batch %1: max |diff| %2").arg(b).arg(d)));
    }
  }

  void decode_equals_full_forward_data() { logits_match_transformers_data(); }
  void decode_equals_full_forward() {
    QFETCH(QString, fixture);
    auto model = load_model(kData + "/" + fixture.toStdString());
    const std::vector<int32_t> ids = {5, 77, 300, 12, 12, 499, 0, 256, 31, 8, 100, 4};
    const auto full = full_logits(*model, *m_be, ids);
    const int V = model->config().vocab_size;
    Runner r(*model, *m_be);
    KVCache cache(model->config(), 16);
    ForwardOptions all;
    all.all_logits = true;
    auto pre = r.forward(std::span(ids).first(5), cache, all);
    QVERIFY(max_abs_diff(pre, std::span<const float>(full).first(5 * V)) < 1e-4);
    for (size_t t = 5; t < ids.size(); ++t) {
      auto step = r.forward(std::span(ids).subspan(t, 1), cache);
      const double d = max_abs_diff(step, std::span<const float>(full).subspan(t * V, V));
      QVERIFY2(d < 1e-4, qPrintable(QString("position %1: %2").arg(t).arg(d)));
    }
    cache.truncate(8);
    auto again = r.forward(std::span(ids).subspan(8, 1), cache);
    QVERIFY(max_abs_diff(again, std::span<const float>(full).subspan(8 * V, V)) < 1e-4);
    // The cache is KVH*HS wide, not C: GQA's memory saving is real.
    QCOMPARE(cache.row_width(), 2 * 16);
  }

  // Several sequences in one step (batched decode with a prefill chunk among them) equal each one alone.
  void batched_step_equals_separate_steps_data() { logits_match_transformers_data(); }
  void batched_step_equals_separate_steps() {
    QFETCH(QString, fixture);
    auto model = load_model(kData + "/" + fixture.toStdString());
    const std::string failed = batched_step_mismatch(*model, *m_be, 1e-4);
    QVERIFY2(failed.empty(), failed.c_str());
  }

  void gqa_equals_expanded_multi_head() {
    // Repeating each key/value head for its group of query heads gives an ordinary multi-head model
    // with the same function: checks that query head h reads kv head h / (NH/KVH).
    auto gqa = load_model(kData + "/tiny-qwen2");
    ModelConfig c = gqa->config();
    const int group = c.n_head / c.n_kv_head, HS = c.head_size(), C = c.n_embd, L = c.n_layer;
    c.n_kv_head = c.n_head;
    Model mha(c);
    for (const auto& p : mha.params()) {
      float* dst = mha.param_data(p.name);
      const float* src = gqa->param_data(p.name);
      const bool kv =
          p.name == "h.wk.weight" || p.name == "h.wv.weight" || p.name == "h.wk.bias" || p.name == "h.wv.bias";
      if (!kv) {
        std::copy(src, src + p.numel, dst);
        continue;
      }
      const int cols = p.name.ends_with(".weight") ? C : 1;
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < c.n_head; ++h)
          std::copy(src + (size_t(l) * gqa->config().kv_width() + size_t(h / group) * HS) * cols,
                    src + (size_t(l) * gqa->config().kv_width() + size_t(h / group + 1) * HS) * cols,
                    dst + (size_t(l) * C + size_t(h) * HS) * cols);
    }
    const std::vector<int32_t> ids = {1, 2, 3, 400, 5, 6, 7};
    const auto a = full_logits(*gqa, *m_be, ids), b = full_logits(mha, *m_be, ids);
    QVERIFY2(max_abs_diff(a, b) < 1e-5, qPrintable(QString::number(max_abs_diff(a, b))));
  }

  void interleaved_rope_layout_data() { logits_match_transformers_data(); }
  void interleaved_rope_layout() {
    // GGUF stores q/k rows permuted for interleaved rotary pairs. Permuting our rows the same way and
    // setting rope_interleaved must give the same function; saving must permute them back to HF's.
    QFETCH(QString, fixture);
    auto model = load_model(kData + "/" + fixture.toStdString());
    ModelConfig c = model->config();
    c.rope_interleaved = true;
    auto il = copy_model(*model, c);
    const int HS = c.head_size(), half = HS / 2, C = c.n_embd;
    auto permute = [&](const std::string& name, int width, int cols) {
      const float* src = model->param_data(name);
      float* dst = il->param_data(name);
      for (int l = 0; l < c.n_layer; ++l)
        for (int h = 0; h < width / HS; ++h)
          for (int r = 0; r < HS; ++r) {
            const int to = r < half ? 2 * r : 2 * (r - half) + 1;  // HF row r -> interleaved row `to`
            const size_t s = (size_t(l) * width + size_t(h) * HS + r) * cols,
                         d = (size_t(l) * width + size_t(h) * HS + to) * cols;
            std::copy(src + s, src + s + cols, dst + d);
          }
    };
    permute("h.wq.weight", C, C);
    permute("h.wk.weight", c.kv_width(), C);
    if (c.qkv_bias) {
      permute("h.wq.bias", C, 1);
      permute("h.wk.bias", c.kv_width(), 1);
    }
    const std::vector<int32_t> ids = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 511};
    const auto ref = full_logits(*model, *m_be, ids), got = full_logits(*il, *m_be, ids);
    QVERIFY2(max_abs_diff(ref, got) < 1e-5, qPrintable(QString::number(max_abs_diff(ref, got))));
    // The wrong flag gives a different function (the test above is not vacuous).
    auto wrong = copy_model(*il, model->config());
    QVERIFY(max_abs_diff(ref, full_logits(*wrong, *m_be, ids)) > 1e-3);

    QTemporaryDir dir;
    save_hf_directory(*il, dir.path().toStdString() + "/saved", "", "{}");
    auto back = load_model(dir.path().toStdString() + "/saved");
    QCOMPARE(back->config().rope_interleaved, false);
    QVERIFY(std::equal(back->all_params().begin(), back->all_params().end(), model->all_params().begin()));
  }

  void hf_round_trip_data() { logits_match_transformers_data(); }
  void hf_round_trip() {
    QFETCH(QString, fixture);
    auto model = load_model(kData + "/" + fixture.toStdString());
    QTemporaryDir dir;
    const std::string out = dir.path().toStdString() + "/saved";
    save_hf_directory(*model, out, "", "{\"test\": true}");
    auto again = load_model(out);
    const ModelConfig &a = model->config(), &b = again->config();
    QCOMPARE(b.n_kv_head, a.n_kv_head);
    QCOMPARE(b.qkv_bias, a.qkv_bias);
    QCOMPARE(b.tie_embeddings, a.tie_embeddings);
    QCOMPARE(b.rope_theta, a.rope_theta);
    QCOMPARE(b.norm_eps, a.norm_eps);
    QCOMPARE(again->all_params().size(), model->all_params().size());
    QVERIFY(std::equal(again->all_params().begin(), again->all_params().end(), model->all_params().begin()));
    auto written = io::SafetensorsFile::open(out + "/model.safetensors");
    QCOMPARE(written->find("lm_head.weight") != nullptr, !a.tie_embeddings);
  }

  void init_random_and_tinyllama_shape() {
    ModelConfig c;
    c.arch = Arch::Llama;
    c.n_layer = 22, c.n_embd = 2048, c.ffn_dim = 5632, c.n_head = 32, c.n_kv_head = 4, c.vocab_size = 32000;
    c.max_seq_len = 2048, c.tie_embeddings = false;
    c.validate("test");
    QCOMPARE(c.parameter_count(), uint64_t(1100048384));  // TinyLlama-1.1B
    c.qkv_bias = true;
    QCOMPARE(c.parameter_count(), uint64_t(1100048384) + 22 * (2048 + 2 * 256));

    ModelConfig t;
    t.arch = Arch::Llama;
    t.n_layer = 2, t.n_embd = 64, t.ffn_dim = 160, t.n_head = 4, t.n_kv_head = 2, t.vocab_size = 512,
    t.max_seq_len = 64;
    Model m(t);
    m.init_random(7);
    QCOMPARE(m.param_data("h.ffn_norm.weight")[3], 1.0f);
    QCOMPARE(m.param_data("norm.weight")[0], 1.0f);
    QVERIFY(!m.has_param("lm_head.weight"));  // tied by default
    QVERIFY(!m.has_param("wpe"));
    const auto logits = full_logits(m, *m_be, {1, 2, 3});
    for (float v : logits) QVERIFY(std::isfinite(v));
    Model m2(t);
    m2.init_random(7);
    QVERIFY(std::equal(m.all_params().begin(), m.all_params().end(), m2.all_params().begin()));
  }

  void invalid_configs_are_rejected() {
    ModelConfig c;
    c.arch = Arch::Llama;
    c.n_layer = 2, c.n_embd = 64, c.ffn_dim = 160, c.n_head = 4, c.n_kv_head = 3, c.vocab_size = 512,
    c.max_seq_len = 64;
    QVERIFY_THROWS_EXCEPTION(engine::Error, c.validate("t"));  // 3 does not divide 4
    c.n_kv_head = 8;
    QVERIFY_THROWS_EXCEPTION(engine::Error, c.validate("t"));  // more kv heads than heads
    c.n_kv_head = 2;
    c.validate("t");
    c.n_head = 64;  // head size 1: odd, no rotary pairs
    c.n_kv_head = 64;
    QVERIFY_THROWS_EXCEPTION(engine::Error, c.validate("t"));
    c.n_head = 4, c.n_kv_head = 2;
    c.rope_theta = std::nanf("");
    QVERIFY_THROWS_EXCEPTION(engine::Error, c.validate("t"));
    // GPT-2 keeps its strict rules.
    ModelConfig g;
    g.n_layer = 2, g.n_embd = 64, g.ffn_dim = 256, g.n_head = 4, g.n_kv_head = 2, g.vocab_size = 512,
    g.max_seq_len = 64;
    QVERIFY_THROWS_EXCEPTION(engine::Error, g.validate("t"));
    g.n_kv_head = 4;
    g.validate("t");
    g.qkv_bias = true;
    QVERIFY_THROWS_EXCEPTION(engine::Error, g.validate("t"));
    // An untied head (lm_head.weight, as llama-quantize leaves GPT-2 GGUFs) is allowed.
    g.qkv_bias = false;
    g.tie_embeddings = false;
    g.validate("t");
  }

  void missing_and_misshapen_tensors_are_named_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<bool>("misshape");
    QTest::newRow("up_proj missing") << "tiny-llama"
                                     << "model.layers.1.mlp.up_proj.weight" << false;
    QTest::newRow("untied lm_head missing") << "tiny-llama"
                                            << "lm_head.weight" << false;
    QTest::newRow("final norm missing") << "tiny-llama"
                                        << "model.norm.weight" << false;
    QTest::newRow("k_proj misshapen") << "tiny-llama"
                                      << "model.layers.0.self_attn.k_proj.weight" << true;
    QTest::newRow("qwen2 k bias missing") << "tiny-qwen2"
                                          << "model.layers.0.self_attn.k_proj.bias" << false;
    QTest::newRow("qwen2 embedding misshapen") << "tiny-qwen2"
                                               << "model.embed_tokens.weight" << true;
  }
  void missing_and_misshapen_tensors_are_named() {
    QFETCH(QString, fixture);
    QFETCH(QString, tensor);
    QFETCH(bool, misshape);
    const std::string dir = kData + "/" + fixture.toStdString();
    auto src = io::SafetensorsFile::open(dir + "/model.safetensors");
    QTemporaryDir tmp;
    fs::copy_file(dir + "/config.json", tmp.path().toStdString() + "/config.json");
    std::vector<io::StTensorToWrite> out;
    bool found = false;
    for (const auto& t : src->tensors()) {
      if (t.name == tensor.toStdString()) {
        found = true;
        if (!misshape) continue;
        uint64_t n = 1;
        for (auto d : t.shape) n *= d;
        out.push_back({t.name, t.dtype, {n}, t.data});
        continue;
      }
      out.push_back({t.name, t.dtype, t.shape, t.data});
    }
    QVERIFY(found);
    io::write_safetensors(tmp.path().toStdString() + "/model.safetensors", out);
    try {
      load_model(tmp.path().toStdString());
      QFAIL("expected an error");
    } catch (const engine::Error& e) {
      QVERIFY2(QString(e.what()).contains(tensor), e.what());
      if (misshape) QVERIFY2(QString(e.what()).contains("shape"), e.what());
    }
  }

  void bad_configs_are_errors_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("message");
    QTest::newRow("rope_scaling") << QString::fromStdString(
                                         llama_config(R"(,"rope_scaling":{"type":"linear","factor":2.0})"))
                                  << "not supported yet";
    QTest::newRow("kv heads do not divide") << QString::fromStdString(llama_config("", 3)) << "n_kv_head";
    QTest::newRow("head_dim differs") << QString::fromStdString(llama_config(R"(,"head_dim":32)")) << "head_dim";
    QTest::newRow("gelu activation") << QString::fromStdString(llama_config(R"(,"hidden_act":"gelu")")) << "hidden_act";
    QTest::newRow("llama attention_bias")
        << QString::fromStdString(llama_config(R"(,"attention_bias":true)")) << "attention_bias";
    QTest::newRow("mlp_bias") << QString::fromStdString(llama_config(R"(,"mlp_bias":true)")) << "mlp_bias";
    QTest::newRow("mistral sliding window")
        << QString::fromStdString(llama_config(R"(,"sliding_window":16)", 2, "mistral")) << "sliding_window";
    QTest::newRow("theta string") << QString::fromStdString(llama_config(R"(,"rope_theta":"big")")) << "rope_theta";
    QTest::newRow("huge hidden") << QString::fromStdString(llama_config(R"(,"hidden_size":1099511627776)"))
                                 << "hidden_size";
    QTest::newRow("missing field") << R"({"model_type":"llama","hidden_size":64})"
                                   << "intermediate_size";
    QTest::newRow("unknown family") << R"({"model_type":"gemma","hidden_size":64})"
                                    << "not supported yet";
  }
  void bad_configs_are_errors() {
    QFETCH(QString, config);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    write_config(tmp, kData + "/tiny-llama", config.toStdString());
    try {
      load_model(tmp.path().toStdString());
      QFAIL("expected an error");
    } catch (const engine::Error& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  void mistral_without_window_loads() {
    // Mistral is Llama's architecture; without a (short) sliding window the same weights give the same logits.
    QTemporaryDir tmp;
    write_config(tmp, kData + "/tiny-llama", llama_config(R"(,"sliding_window":null)", 2, "mistral"));
    auto m = load_model(tmp.path().toStdString());
    auto ref = load_model(kData + "/tiny-llama");
    const std::vector<int32_t> ids = {3, 1, 4, 1, 5};
    QVERIFY(max_abs_diff(full_logits(*m, *m_be, ids), full_logits(*ref, *m_be, ids)) == 0.0);
  }
};

QTEST_APPLESS_MAIN(TestLlamaModel)
#include "test_llama_model.moc"
