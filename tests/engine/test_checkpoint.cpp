// Training checkpoints (engine/train/checkpoint.h): a bit-exact round trip of weights, AdamW moments,
// step count, data position, seed and config; every corruption (truncation at each length class, a
// flipped byte in the header or the data, a zero-byte file, a foreign model, a wrong version) is an
// engine::Error that leaves the optimizer untouched; writes are atomic (a failed write leaves no partial
// file and the older checkpoints intact); resume falls back past an unreadable newest checkpoint.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/io/safetensors.h"
#include "engine/train/checkpoint.h"
#include "support/error_of.h"

namespace fs = std::filesystem;

namespace {

// Two tensors and an AdamW over them, with state made non-trivial by a few random steps.
struct Rig {
  std::vector<float> w, gw, b, gb;
  std::unique_ptr<engine::AdamW> opt;
  explicit Rig(uint64_t seed, size_t nw = 48, size_t nb = 6, const char* wname = "h.fc.weight") {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd;
    w.resize(nw);
    gw.resize(nw);
    b.resize(nb);
    gb.resize(nb);
    for (float& x : w) x = nd(rng);
    for (float& x : b) x = nd(rng);
    engine::TrainableTensor tw{wname, {int64_t(nw)}, w.data(), gw.data(), nw, true};
    engine::TrainableTensor tb{"h.fc.bias", {int64_t(nb)}, b.data(), gb.data(), nb, false};
    opt = std::make_unique<engine::AdamW>(std::vector<engine::TrainableTensor>{tw, tb},
                                          engine::AdamWParams{0.9, 0.95, 1e-8, 0.1});
    for (int s = 0; s < 3; ++s) {
      for (float& x : gw) x = nd(rng);
      for (float& x : gb) x = nd(rng);
      opt->step(1e-2f);
    }
  }
  // Everything the checkpoint must carry, as bytes.
  std::vector<float> snapshot() const {
    std::vector<float> all = w;
    all.insert(all.end(), b.begin(), b.end());
    for (size_t i = 0; i < 2; ++i) {
      all.insert(all.end(), opt->first_moment(i).begin(), opt->first_moment(i).end());
      all.insert(all.end(), opt->second_moment(i).begin(), opt->second_moment(i).end());
    }
    all.push_back(float(opt->step_count()));
    return all;
  }
};

engine::TrainState state(int64_t step) {
  engine::TrainState s;
  s.step = step;
  s.data = {3, 1234};
  s.seed = 0xFFFFFFFFFFFFull;
  s.config_json = R"({"recipe":"pretrain","batch":4})";
  return s;
}

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_all(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT

 private slots:
  void round_trip_is_bit_exact() {
    QTemporaryDir dir;
    Rig a(1);
    const std::string path = engine::save_checkpoint(dir.path().toStdString(), *a.opt, state(3));
    QCOMPARE(fs::path(path).filename().string(), std::string("ckpt_00000003.safetensors"));
    Rig b(2);  // different values and moments, same shapes
    QVERIFY(!same_bits(a.snapshot(), b.snapshot()));
    const engine::TrainState st = engine::load_checkpoint(path, *b.opt);
    QVERIFY(same_bits(a.snapshot(), b.snapshot()));
    QCOMPARE(st.step, int64_t(3));
    QVERIFY(st.data == (engine::DataPosition{3, 1234}));
    QCOMPARE(st.seed, 0xFFFFFFFFFFFFull);
    QCOMPARE(st.config_json, state(3).config_json);
    QCOMPARE(b.opt->step_count(), int64_t(3));
  }

  void objective_state_round_trips_and_is_checksummed() {
    QTemporaryDir dir;
    Rig a(1);
    engine::TrainState s = state(4);
    s.objective_state = "kl_coef=0.0496";
    const std::string path = engine::save_checkpoint(dir.path().toStdString(), *a.opt, s);
    Rig b(2);
    QCOMPARE(engine::load_checkpoint(path, *b.opt).objective_state, s.objective_state);
    // Without one, none is written and none comes back.
    const std::string plain = engine::save_checkpoint(dir.path().toStdString(), *a.opt, state(5));
    QVERIFY(read_all(plain).find("objective_state") == std::string::npos);
    QCOMPARE(engine::load_checkpoint(plain, *b.opt).objective_state, std::string());
    // A changed value is caught.
    std::string bytes = read_all(path);
    const size_t at = bytes.find("0.0496");
    QVERIFY(at != std::string::npos);
    bytes[at + 3] = '5';
    write_all(path, bytes);
    QVERIFY(error_of([&] { engine::load_checkpoint(path, *b.opt); }).contains("'objective_state' fails its checksum"));
  }

  void every_corruption_is_a_clear_error_and_changes_nothing() {
    QTemporaryDir dir;
    Rig a(1);
    const std::string path = engine::save_checkpoint(dir.path().toStdString(), *a.opt, state(7));
    const std::string good = read_all(path);
    const uint64_t header_len = *reinterpret_cast<const uint64_t*>(good.data());
    struct Case {
      const char* what;
      std::string bytes;
      const char* needle;
    };
    std::vector<Case> cases;
    cases.push_back({"zero bytes", "", ""});
    for (size_t cut : {size_t(4), size_t(8 + header_len / 2), size_t(8 + header_len), good.size() - 1})
      cases.push_back({"truncated", good.substr(0, cut), ""});
    std::string flip_data = good;
    flip_data[good.size() - 5] ^= 0x10;  // inside the last tensor's bytes
    cases.push_back({"flipped data byte", flip_data, "fails its checksum"});
    std::string flip_first = good;
    flip_first[8 + header_len] ^= 0x01;  // the first data byte
    cases.push_back({"flipped first data byte", flip_first, "fails its checksum"});
    std::string flip_header = good;
    flip_header[8 + header_len / 3] ^= 0x40;
    cases.push_back({"flipped header byte", flip_header, ""});

    for (const Case& c : cases) {
      write_all(path, c.bytes);
      Rig b(2);
      const std::vector<float> before = b.snapshot();
      const QString e = error_of([&] { engine::load_checkpoint(path, *b.opt); });
      QVERIFY2(!e.isEmpty() && e.contains(QString::fromStdString(path)), qPrintable(QString(c.what) + ": " + e));
      QVERIFY2(e.contains(c.needle), qPrintable(QString(c.what) + ": " + e));
      QVERIFY2(same_bits(before, b.snapshot()), c.what);
    }
  }

  void foreign_checkpoints_are_refused() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    Rig a(1);
    const std::string path = engine::save_checkpoint(d, *a.opt, state(1));
    Rig bigger(2, 64);
    QVERIFY(
        error_of([&] { engine::load_checkpoint(path, *bigger.opt); }).contains("has 48 values, the model needs 64"));
    Rig renamed(2, 48, 6, "h.qkv.weight");
    QVERIFY(error_of([&] {
              engine::load_checkpoint(path, *renamed.opt);
            }).contains("tensor 'value/h.qkv.weight' is missing"));

    // A safetensors file that is not ours, and one from a future version.
    const float x = 1.0f;
    engine::io::write_safetensors(d + "/model.safetensors", {{"w", engine::io::StDType::F32, {1}, &x}});
    QVERIFY(error_of([&] {
              engine::load_checkpoint(d + "/model.safetensors", *a.opt);
            }).contains("not a training checkpoint"));
    engine::io::write_safetensors(d + "/v2.safetensors", {{"w", engine::io::StDType::F32, {1}, &x}},
                                  {{"format", "llm-workbench-train-checkpoint"}, {"version", "2"}});
    QVERIFY(error_of([&] {
              engine::load_checkpoint(d + "/v2.safetensors", *a.opt);
            }).contains("version 2 is not supported"));
  }

  void keeps_the_newest_and_lists_them_newest_first() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString() + "/nested/checkpoints";  // created on demand
    Rig a(1);
    for (int s : {5, 10, 15, 20}) engine::save_checkpoint(d, *a.opt, state(s), /*keep=*/2);
    const std::vector<std::string> all = engine::list_checkpoints(d);
    QCOMPARE(all.size(), size_t(2));
    QCOMPARE(fs::path(all[0]).filename().string(), std::string("ckpt_00000020.safetensors"));
    QCOMPARE(fs::path(all[1]).filename().string(), std::string("ckpt_00000015.safetensors"));
    QVERIFY(engine::list_checkpoints(d + "/none").empty());
  }

  void resume_falls_back_past_a_bad_newest_checkpoint() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    Rig a(1);
    engine::save_checkpoint(d, *a.opt, state(4));
    const std::vector<float> at4 = a.snapshot();
    for (float& g : a.gw) g = 0.5f;
    a.opt->step(1e-2f);
    const std::string newest = engine::save_checkpoint(d, *a.opt, state(8));
    write_all(newest, read_all(newest).substr(0, 100));  // torn write of the newest
    Rig b(2);
    std::string loaded;
    std::vector<std::string> warnings;
    const engine::TrainState st = engine::load_latest_checkpoint(d, *b.opt, &loaded, &warnings);
    QCOMPARE(st.step, int64_t(4));
    QVERIFY(same_bits(b.snapshot(), at4));
    QCOMPARE(warnings.size(), size_t(1));
    QVERIFY(QString::fromStdString(warnings[0]).contains("ckpt_00000008"));
    QVERIFY(QString::fromStdString(loaded).endsWith("ckpt_00000004.safetensors"));
    QVERIFY(error_of([&] {
              engine::load_latest_checkpoint(d + "/empty", *b.opt, nullptr, nullptr);
            }).contains("no checkpoint"));
  }

  void failed_write_leaves_no_partial_file() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    Rig a(1);
    const std::string first = engine::save_checkpoint(d, *a.opt, state(1));
    const std::string first_bytes = read_all(first);
    // A directory where checkpoint 2 must go makes the final rename fail after the data was written.
    fs::create_directory(d + "/ckpt_00000002.safetensors");
    // A stale temp file of a write interrupted by a crash.
    write_all(d + "/.ckpt_00000001.safetensors.tmp-999-1", "partial");
    QVERIFY(!error_of([&] { engine::save_checkpoint(d, *a.opt, state(2)); }).isEmpty());
    for (const auto& e : fs::directory_iterator(d)) {
      const std::string n = e.path().filename().string();
      QVERIFY2(n.find(".tmp") == std::string::npos, n.c_str());  // neither ours nor the stale one remains
    }
    QCOMPARE(read_all(first), first_bytes);
    Rig b(2);
    QCOMPARE(engine::load_checkpoint(first, *b.opt).step, int64_t(1));
  }
};

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
