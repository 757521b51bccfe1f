// The whole GPT-2 forward pass against an independent implementation, and the KV cache against the
// full forward.
//
// tests/data/tiny-gpt2/ holds a tiny GPT-2 (2 layers, 64 wide, vocab 512) written by Hugging Face
// transformers and the logits PyTorch computed for it (tests/tools/make_tiny_gpt2_fixture.py).
#include <QtTest>

#include <cmath>
#include <filesystem>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/llmc_checkpoint.h"
#include "engine/io/safetensors.h"
#include "engine/kv_cache.h"
#include "engine/model_loader.h"
#include "support/model_helpers.h"

namespace fs = std::filesystem;
using namespace engine;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

}  // namespace

class TestGpt2Model : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);

 private slots:
  void logits_match_transformers() {
    auto model = load_model(kTiny);
    QCOMPARE(model->config().n_layer, 2);
    QCOMPARE(model->config().vocab_size, 512);
    auto expected = io::SafetensorsFile::open(kTiny + "/expected.safetensors");
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
      QVERIFY2(d < 2e-4, qPrintable(QString("batch %1: max |diff| %2").arg(b).arg(d)));
    }
  }

  void decode_equals_full_forward() {
    auto model = load_model(kTiny);
    const std::vector<int32_t> ids = {5, 77, 300, 12, 12, 499, 0, 256, 31, 8, 100, 4};
    const auto full = full_logits(*model, *m_be, ids);
    const int V = model->config().vocab_size;
    // Prefill the first 5 tokens, then decode the rest one by one.
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
    QCOMPARE(cache.size(), int(ids.size()));
    // Rewinding the cache and recomputing a suffix gives the same logits again (regenerate).
    cache.truncate(8);
    auto again = r.forward(std::span(ids).subspan(8, 1), cache);
    QVERIFY(max_abs_diff(again, std::span<const float>(full).subspan(8 * V, V)) < 1e-4);
  }

  // Several sequences in one step (GPT-2's fused q/k/v rows copied to each cache) equal each one alone.
  void batched_step_equals_separate_steps() {
    auto model = load_model(kTiny);
    const std::string failed = batched_step_mismatch(*model, *m_be, 1e-4);
    QVERIFY2(failed.empty(), failed.c_str());
  }

  void cache_overflow_and_bad_tokens_are_errors() {
    auto model = load_model(kTiny);
    Runner r(*model, *m_be);
    KVCache cache(model->config(), 4);
    const std::vector<int32_t> five = {1, 2, 3, 4, 5};
    QVERIFY_THROWS_EXCEPTION(engine::Error, r.forward(five, cache));
    const std::vector<int32_t> bad = {1, 512};
    QVERIFY_THROWS_EXCEPTION(engine::Error, r.forward(bad, cache));
    QVERIFY_THROWS_EXCEPTION(engine::Error, KVCache(model->config(), 65));
  }

  void hf_round_trip_and_prefix_variants() {
    auto model = load_model(kTiny);
    QTemporaryDir dir;
    const std::string out = dir.path().toStdString() + "/saved";
    save_hf_directory(*model, out, "", "{\"test\": true}");
    auto again = load_model(out);
    QCOMPARE(again->all_params().size(), model->all_params().size());
    QVERIFY(std::equal(again->all_params().begin(), again->all_params().end(), model->all_params().begin()));
    // The fixture uses "transformer."-prefixed names; our writer does not: both loaded above.
    auto src = io::SafetensorsFile::open(kTiny + "/model.safetensors");
    QVERIFY(src->find("transformer.wte.weight") != nullptr);
    auto written = io::SafetensorsFile::open(out + "/model.safetensors");
    QVERIFY(written->find("wte.weight") != nullptr);
  }

  void half_precision_files_load() {
    // Rewrite the fixture's tensors as f16 and bf16; the model must load and stay close.
    auto model = load_model(kTiny);
    const auto ref = full_logits(*model, *m_be, {1, 2, 3, 4});
    auto src = io::SafetensorsFile::open(kTiny + "/model.safetensors");
    for (auto dt : {io::StDType::F16, io::StDType::BF16}) {
      QTemporaryDir dir;
      fs::copy_file(kTiny + "/config.json", dir.path().toStdString() + "/config.json");
      std::vector<std::vector<uint16_t>> bufs;
      std::vector<io::StTensorToWrite> out;
      bufs.reserve(src->tensors().size());
      for (const auto& t : src->tensors()) {
        const auto f = src->read_f32(t);
        std::vector<uint16_t> h(f.size());
        for (size_t i = 0; i < f.size(); ++i) h[i] = dt == io::StDType::F16 ? f32_to_fp16(f[i]) : f32_to_bf16(f[i]);
        bufs.push_back(std::move(h));
        out.push_back({t.name, dt, t.shape, bufs.back().data()});
      }
      io::write_safetensors(dir.path().toStdString() + "/model.safetensors", out);
      auto m = load_model(dir.path().toStdString());
      const auto got = full_logits(*m, *m_be, {1, 2, 3, 4});
      const double tol = dt == io::StDType::F16 ? 0.05 : 0.3;
      QVERIFY2(max_abs_diff(got, ref) < tol, qPrintable(QString::number(max_abs_diff(got, ref))));
    }
  }

  void missing_and_misshapen_tensors_are_named() {
    auto src = io::SafetensorsFile::open(kTiny + "/model.safetensors");
    auto write_without = [&](const std::string& drop, bool misshape) {
      QTemporaryDir* dir = new QTemporaryDir;
      fs::copy_file(kTiny + "/config.json", dir->path().toStdString() + "/config.json");
      std::vector<io::StTensorToWrite> out;
      for (const auto& t : src->tensors()) {
        if (t.name == drop && !misshape) continue;
        auto shape = t.shape;
        if (t.name == drop && misshape) {
          out.push_back({t.name, t.dtype, {shape[0] * shape[1]}, t.data});
          continue;
        }
        out.push_back({t.name, t.dtype, shape, t.data});
      }
      io::write_safetensors(dir->path().toStdString() + "/model.safetensors", out);
      return dir;
    };
    {
      std::unique_ptr<QTemporaryDir> d(write_without("transformer.h.1.mlp.c_fc.weight", false));
      try {
        load_model(d->path().toStdString());
        QFAIL("expected an error");
      } catch (const engine::Error& e) {
        QVERIFY2(QString(e.what()).contains("h.1.mlp.c_fc.weight"), e.what());
      }
    }
    {
      std::unique_ptr<QTemporaryDir> d(write_without("transformer.h.0.attn.c_attn.weight", true));
      try {
        load_model(d->path().toStdString());
        QFAIL("expected an error");
      } catch (const engine::Error& e) {
        QVERIFY2(QString(e.what()).contains("shape"), e.what());
      }
    }
  }

  void bad_configs_are_errors_data() {
    QTest::addColumn<QString>("config");
    QTest::newRow("not json") << "{";
    QTest::newRow("string layer count")
        << R"({"n_layer":"two","n_embd":64,"n_head":4,"vocab_size":512,"n_positions":64})";
    QTest::newRow("zero heads") << R"({"n_layer":2,"n_embd":64,"n_head":0,"vocab_size":512,"n_positions":64})";
    QTest::newRow("heads do not divide") << R"({"n_layer":2,"n_embd":64,"n_head":5,"vocab_size":512,"n_positions":64})";
    QTest::newRow("huge context")
        << R"({"n_layer":2,"n_embd":64,"n_head":4,"vocab_size":512,"n_positions":1099511627776})";
    QTest::newRow("other arch")
        << R"({"model_type":"bert","n_layer":2,"n_embd":64,"n_head":4,"vocab_size":512,"n_positions":64})";
    QTest::newRow("vocab mismatch") << R"({"n_layer":2,"n_embd":64,"n_head":4,"vocab_size":513,"n_positions":64})";
  }
  void bad_configs_are_errors() {
    QFETCH(QString, config);
    QTemporaryDir dir;
    fs::copy_file(kTiny + "/model.safetensors", dir.path().toStdString() + "/model.safetensors");
    QFile f(dir.path() + "/config.json");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(config.toUtf8());
    f.close();
    QVERIFY_THROWS_EXCEPTION(engine::Error, load_model(dir.path().toStdString()));
  }

  void a_config_larger_than_its_file_is_refused_before_allocating() {
    // 1000 layers of the tiny model's width: about 50M parameters (200 MB) that the 2-layer file cannot hold. Refused
    // from the file's tensor sizes before the model's memory is allocated, not at the first missing tensor (a config
    // asking for billions of parameters would otherwise allocate them first). One missing tensor is still named
    // (missing_and_misshapen_tensors_are_named).
    QTemporaryDir dir;
    fs::copy_file(kTiny + "/model.safetensors", dir.path().toStdString() + "/model.safetensors");
    QFile f(dir.path() + "/config.json");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"n_layer":1000,"n_embd":64,"n_head":4,"vocab_size":512,"n_positions":64})");
    f.close();
    try {
      load_model(dir.path().toStdString());
      QFAIL("expected an error");
    } catch (const engine::Error& e) {
      QVERIFY2(QString(e.what()).contains("parameters but the file's tensors hold only"), e.what());
    }
  }

  void llmc_checkpoint_loads_same_model() {
    auto model = load_model(kTiny);
    const ModelConfig& c = model->config();
    io::LlmcCheckpoint ck;
    ck.max_seq_len = c.max_seq_len;
    ck.vocab_size = c.vocab_size;
    ck.padded_vocab_size = c.vocab_size + 64;  // llm.c pads the vocabulary; padding rows are dropped
    ck.num_layers = c.n_layer;
    ck.num_heads = c.n_head;
    ck.channels = c.n_embd;
    for (size_t i = 0; i < model->params().size(); ++i) {
      const auto& p = model->params()[i];
      const float* d = model->param_data(p.name);
      ck.tensors[i].assign(d, d + p.numel);
      if (i == 0) ck.tensors[i].resize(size_t(ck.padded_vocab_size) * c.n_embd, 0.0f);
    }
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/tiny.bin";
    io::write_llmc_checkpoint(path, ck);
    auto loaded = load_model(path);
    QVERIFY(std::equal(loaded->all_params().begin(), loaded->all_params().end(), model->all_params().begin()));
  }

  void unknown_paths_are_errors() {
    QVERIFY_THROWS_EXCEPTION(engine::Error, load_model("/nonexistent/model"));
    QTemporaryDir dir;
    QVERIFY_THROWS_EXCEPTION(engine::Error, load_model(dir.path().toStdString()));  // no config.json
    QFile f(dir.path() + "/junk.bin");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a model at all");
    f.close();
    QVERIFY_THROWS_EXCEPTION(engine::Error, load_model((dir.path() + "/junk.bin").toStdString()));
  }
};

QTEST_APPLESS_MAIN(TestGpt2Model)
#include "test_gpt2_model.moc"
