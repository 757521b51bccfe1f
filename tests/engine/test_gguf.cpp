// Tests for the GGUF reader and writer (engine/io/gguf.h).
//
// The corrupt-file table has rows for every container-level case of reliability.md §1.7 items 1-14
// (prefixed with the item number); all bad files are generated here by a small raw writer (no
// third-party PoC binaries). Items 14's length/ID checks and 15 are tokenizer rules, not container
// rules: here, item 14 is the type confusion the typed getters must refuse. On top of the table:
// every truncation of a valid file, and seeded random mutations, must end in engine::Error or a
// valid parse whose tensors can all be read, never a crash (run under ASan/UBSan to make "never"
// mean something). small.gguf, written by gguf-py (tests/tools/make_gguf_fixture.py), checks the
// reader against an independent writer.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/io/gguf.h"
#include "support/error_of.h"

using engine::io::GgmlType;
using engine::io::GgufFile;
using engine::io::GgufMetadata;
using engine::io::GgufTensorToWrite;
using engine::io::GgufType;
using engine::io::GgufValue;

Q_DECLARE_METATYPE(std::string)

namespace {

// ---------------------------------------------------------------- raw writer for crafted files
std::string u32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string u64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string str(const std::string& s) { return u64(s.size()) + s; }
std::string f32b(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return u32(b);
}

std::string head(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
  return "GGUF" + u32(version) + u64(n_tensors) + u64(n_kv);
}
// A key-value entry: key, type, then the payload bytes as given.
std::string kv(const std::string& key, uint32_t type, const std::string& payload) {
  return str(key) + u32(type) + payload;
}
std::string kv_u32(const std::string& key, uint32_t v) { return kv(key, 4, u32(v)); }
std::string kv_str(const std::string& key, const std::string& v) { return kv(key, 8, str(v)); }
std::string kv_arr(const std::string& key, uint32_t elem, uint64_t n, const std::string& payload) {
  return kv(key, 9, u32(elem) + u64(n) + payload);
}
std::string tinfo(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset) {
  std::string s = str(name) + u32(static_cast<uint32_t>(ne.size()));
  for (uint64_t d : ne) s += u64(d);
  return s + u32(type) + u64(offset);
}

// A whole file: header with the right counts, the entries, padding to `align`, `data` filler bytes.
std::string file(const std::vector<std::string>& kvs, const std::vector<std::string>& infos, uint64_t data = 0,
                 uint64_t align = 32) {
  std::string s = head(infos.size(), kvs.size());
  for (const auto& k : kvs) s += k;
  for (const auto& t : infos) s += t;
  s.append((align - s.size() % align) % align, '\0');
  return s + std::string(data, '\x11');
}
// The minimal valid file: one F32 [4] tensor.
std::string one_tensor(const std::string& info, uint64_t data = 16, std::vector<std::string> kvs = {}) {
  return file(kvs, {info}, data);
}

std::unique_ptr<GgufFile> parse(const std::string& bytes) {
  return GgufFile::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t.gguf");
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Reads every byte of every tensor and every metadata value, so ASan sees any bad pointer.
uint64_t touch_all(const GgufFile& f) {
  uint64_t sum = 0;
  for (const auto& t : f.tensors())
    for (uint64_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
  for (const auto& [k, v] : f.metadata()) {
    for (uint8_t b : v.raw()) sum += b;
    for (const auto& s : v.strings()) sum += s.size();
  }
  return sum;
}

std::vector<uint8_t> pattern(uint64_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i * 7 + (i >> 8));
  return v;
}

// Metadata with every value type, scalar and array.
GgufMetadata all_value_types() {
  return {
      {"general.architecture", GgufValue("gpt2")},
      {"t.u8", GgufValue(uint8_t(250))},
      {"t.i8", GgufValue(int8_t(-7))},
      {"t.u16", GgufValue(uint16_t(65535))},
      {"t.i16", GgufValue(int16_t(-32768))},
      {"t.u32", GgufValue(uint32_t(4000000000u))},
      {"t.i32", GgufValue(int32_t(-2000000000))},
      {"t.f32", GgufValue(1.25f)},
      {"t.bool", GgufValue(true)},
      {"t.bool0", GgufValue(false)},
      {"t.string", GgufValue(std::string("h\xc3\xa9llo\nworld"))},
      {"t.empty_string", GgufValue(std::string())},
      {"t.u64", GgufValue(uint64_t(18446744073709551615ull))},
      {"t.i64", GgufValue(int64_t(std::numeric_limits<int64_t>::min()))},
      {"t.f64", GgufValue(-2.5e300)},
      {"a.u8", GgufValue::array(std::vector<uint8_t>{0, 1, 255})},
      {"a.i8", GgufValue::array(std::vector<int8_t>{-128, 127})},
      {"a.u16", GgufValue::array(std::vector<uint16_t>{1, 65535})},
      {"a.i16", GgufValue::array(std::vector<int16_t>{-1})},
      {"a.u32", GgufValue::array(std::vector<uint32_t>{7, 8, 9})},
      {"a.i32", GgufValue::array(std::vector<int32_t>{-1, 0, 1})},
      {"a.f32", GgufValue::array(std::vector<float>{0.5f, -1.0f, std::numeric_limits<float>::infinity()})},
      {"a.bool", GgufValue::bool_array({true, false, true})},
      {"a.string", GgufValue::array(std::vector<std::string>{"<|endoftext|>", "", "\xc4\xa0the"})},
      {"a.u64", GgufValue::array(std::vector<uint64_t>{uint64_t(1) << 63})},
      {"a.i64", GgufValue::array(std::vector<int64_t>{-5, 5})},
      {"a.f64", GgufValue::array(std::vector<double>{1e-300, 3.0})},
      {"a.empty", GgufValue::array(std::vector<float>{})},
  };
}

// A small valid file from our writer: metadata of several types and three tensors.
std::string small_valid_image() {
  static const auto f32 = pattern(4 * 6, 1), f16 = pattern(2 * 3, 2), q8 = pattern(34 * 2, 3);
  GgufMetadata md = {{"general.architecture", GgufValue("gpt2")},
                     {"gpt2.block_count", GgufValue(uint32_t(2))},
                     {"tokenizer.ggml.tokens", GgufValue::array(std::vector<std::string>{"a", "bc"})},
                     {"tokenizer.ggml.scores", GgufValue::array(std::vector<float>{0.5f, -1.0f})},
                     {"flag", GgufValue(true)}};
  const std::vector<GgufTensorToWrite> ts = {{"w", GgmlType::F32, {3, 2}, f32.data()},
                                             {"h", GgmlType::F16, {3}, f16.data()},
                                             {"q", GgmlType::Q8_0, {64}, q8.data()}};
  const auto v = engine::io::encode_gguf(md, ts);
  return std::string(v.begin(), v.end());
}

}  // namespace

class TestGguf : public QObject {
  Q_OBJECT

 private slots:
  // ---------------------------------------------------------------- round trips
  void round_trip_every_value_type() {
    const GgufMetadata md = all_value_types();
    const auto bytes = engine::io::encode_gguf(md, {});
    auto f = GgufFile::from_memory(bytes.data(), bytes.size(), "mem");
    QCOMPARE(f->version(), uint32_t(3));
    QCOMPARE(f->metadata().size(), md.size());
    for (size_t i = 0; i < md.size(); ++i) {
      QCOMPARE(f->metadata()[i].first, md[i].first);
      QVERIFY2(f->metadata()[i].second == md[i].second, md[i].first.c_str());
    }
    QCOMPARE(f->architecture(), std::string("gpt2"));
    QCOMPARE(f->get_u32("t.u32"), 4000000000u);
    QCOMPARE(f->get_i32("t.i32"), -2000000000);
    QCOMPARE(f->get_u64("t.u64"), uint64_t(18446744073709551615ull));
    QCOMPARE(f->get_uint("t.u8"), uint64_t(250));
    QCOMPARE(f->get_uint("t.u16"), uint64_t(65535));
    QCOMPARE(f->get_uint("t.u32"), uint64_t(4000000000u));
    QCOMPARE(f->get_f32("t.f32"), 1.25f);
    QCOMPARE(f->get_bool("t.bool"), true);
    QCOMPARE(f->get_bool("t.bool0"), false);
    QCOMPARE(f->get_string("t.string"), std::string("h\xc3\xa9llo\nworld"));
    QCOMPARE(f->find_value("t.i8")->scalar<int8_t>("x"), int8_t(-7));
    QCOMPARE(f->find_value("t.i16")->scalar<int16_t>("x"), int16_t(-32768));
    QCOMPARE(f->find_value("t.i64")->scalar<int64_t>("x"), std::numeric_limits<int64_t>::min());
    QCOMPARE(f->find_value("t.f64")->scalar<double>("x"), -2.5e300);
    QCOMPARE(f->get_string_array("a.string"), (std::vector<std::string>{"<|endoftext|>", "", "\xc4\xa0the"}));
    QCOMPARE(f->get_f32_array("a.f32").size(), size_t(3));
    QCOMPARE(f->get_f32_array("a.f32")[2], std::numeric_limits<float>::infinity());
    QCOMPARE(f->get_i32_array("a.i32"), (std::vector<int32_t>{-1, 0, 1}));
    QCOMPARE(f->find_value("a.u64")->array_of<uint64_t>("x"), std::vector<uint64_t>{uint64_t(1) << 63});
    QCOMPARE(f->find_value("a.f64")->array_of<double>("x"), (std::vector<double>{1e-300, 3.0}));
    QCOMPARE(f->find_value("a.bool")->bool_array_of("x"), (std::vector<bool>{true, false, true}));
    QCOMPARE(f->find_value("a.u8")->array_of<uint8_t>("x"), (std::vector<uint8_t>{0, 1, 255}));
    QCOMPARE(f->find_value("a.i8")->array_of<int8_t>("x"), (std::vector<int8_t>{-128, 127}));
    QCOMPARE(f->find_value("a.u16")->array_of<uint16_t>("x"), (std::vector<uint16_t>{1, 65535}));
    QCOMPARE(f->find_value("a.i16")->array_of<int16_t>("x"), std::vector<int16_t>{-1});
    QCOMPARE(f->find_value("a.u32")->array_of<uint32_t>("x"), (std::vector<uint32_t>{7, 8, 9}));
    QCOMPARE(f->find_value("a.i64")->array_of<int64_t>("x"), (std::vector<int64_t>{-5, 5}));
    QVERIFY(f->get_f32_array("a.empty").empty());
    QCOMPARE(f->find_value("a.empty")->type_text(), std::string("array of FLOAT32"));
    QVERIFY(f->tensors().empty());
  }

  void round_trip_tensors_data() {
    QTest::addColumn<int>("alignment");
    QTest::newRow("align 32 (default)") << 32;
    QTest::newRow("align 64") << 64;
    QTest::newRow("align 1") << 1;
    QTest::newRow("align 4096") << 4096;
  }
  void round_trip_tensors() {
    QFETCH(int, alignment);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("rt.gguf").toStdString();
    struct Spec {
      std::string name;
      GgmlType type;
      std::vector<uint64_t> shape;
    };
    const std::vector<Spec> specs = {
        {"token_embd.weight", GgmlType::F32, {5, 3}},
        {"blk.0.attn_q.weight", GgmlType::F16, {7}},
        {"blk.0.bf16", GgmlType::BF16, {3, 1, 2, 1}},
        {"blk.0.ffn_up.weight", GgmlType::Q8_0, {64, 3}},
        {"blk.0.ffn_down.weight", GgmlType::Q4_0, {32, 1}},
        {"blk.0.q4k", GgmlType::Q4_K, {256}},
        {"blk.0.q6k", GgmlType::Q6_K, {512, 1}},
        {"ids", GgmlType::I8, {3}},
        {"name/with/slash..", GgmlType::F32, {1}},
        {std::string(64, 'n'), GgmlType::F32, {2}},
    };
    std::vector<std::vector<uint8_t>> datas;
    std::vector<GgufTensorToWrite> ts;
    for (size_t i = 0; i < specs.size(); ++i) {
      uint64_t n = 1;
      for (uint64_t d : specs[i].shape) n *= d;
      datas.push_back(pattern(engine::io::ggml_type_bytes(specs[i].type, n), uint8_t(i)));
    }
    for (size_t i = 0; i < specs.size(); ++i)
      ts.push_back({specs[i].name, specs[i].type, specs[i].shape, datas[i].data()});
    const GgufMetadata md = all_value_types();
    engine::io::write_gguf(path, md, ts, uint32_t(alignment));
    const auto mem = engine::io::encode_gguf(md, ts, uint32_t(alignment));
    QCOMPARE(read_all(path), std::string(mem.begin(), mem.end()));

    auto f = GgufFile::open(path);
    QCOMPARE(f->path(), path);
    QCOMPARE(f->alignment(), uint32_t(alignment));
    QCOMPARE(f->has("general.alignment"), alignment != 32);
    QCOMPARE(f->data_offset() % uint64_t(alignment), uint64_t(0));
    QCOMPARE(f->tensors().size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const auto& t = f->tensors()[i];
      QCOMPARE(t.name, specs[i].name);
      QCOMPARE(f->find(t.name), &t);
      QCOMPARE(t.type, specs[i].type);
      QCOMPARE(t.shape, specs[i].shape);
      QCOMPARE(t.nbytes, uint64_t(datas[i].size()));
      QCOMPARE(t.offset % uint64_t(alignment), uint64_t(0));
      QVERIFY(std::memcmp(t.data, datas[i].data(), t.nbytes) == 0);
      f->release(t);
    }
    QVERIFY(f->find("missing") == nullptr);
    QCOMPARE(f->get_string_array("a.string").size(), size_t(3));
    QCOMPARE(engine::io::ggml_to_dtype(GgmlType::Q8_0), std::optional<engine::DType>(engine::DType::Q8_0));
    QCOMPARE(engine::io::ggml_to_dtype(GgmlType::Q6_K), std::optional<engine::DType>(engine::DType::Q6_K));
    QCOMPARE(engine::io::ggml_to_dtype(GgmlType::I8), std::optional<engine::DType>());
    QCOMPARE(engine::io::dtype_to_ggml(engine::DType::Q4_K), GgmlType::Q4_K);
    QCOMPARE(engine::io::dtype_to_ggml(engine::DType::BF16), GgmlType::BF16);
    QCOMPARE(engine::io::ggml_block_bytes(GgmlType::Q4_K), uint64_t(144));
    QCOMPARE(engine::io::ggml_block_bytes(GgmlType::Q6_K), uint64_t(210));
    QCOMPARE(engine::io::ggml_block_elems(GgmlType::Q6_K), uint64_t(256));
  }

  void accepts_edge_cases_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<int>("tensors");
    const std::string a = tinfo("a", {4}, 0, 0);
    QTest::newRow("7 alignment missing -> 32") << one_tensor(a) << 1;
    QTest::newRow("version 2") << [] {
      std::string s = one_tensor(tinfo("a", {4}, 0, 0));
      s[4] = 2;
      return s;
    }() << 1;
    QTest::newRow("no tensors, no padding") << head(0, 1) + kv_u32("k", 1) << 0;
    QTest::newRow("no tensors, no kvs") << head(0, 0) << 0;
    QTest::newRow("last tensor unpadded") << one_tensor(a, 16) << 1;
    QTest::newRow("last tensor padded") << one_tensor(a, 32) << 1;
    QTest::newRow("8 name of 64 bytes") << one_tensor(tinfo(std::string(64, 'x'), {4}, 0, 0)) << 1;
    QTest::newRow("8 name with / and ..") << one_tensor(tinfo("../../etc/passwd", {4}, 0, 0)) << 1;
    QTest::newRow("8 UTF-8 name") << one_tensor(tinfo("caf\xc3\xa9", {4}, 0, 0)) << 1;
    QTest::newRow("7 alignment 64") << file({kv_u32("general.alignment", 64)}, {a}, 16, 64) << 1;
    QTest::newRow("7 alignment 1 MiB") << file({kv_u32("general.alignment", 1 << 20)}, {a}, 16, 1 << 20) << 1;
    QTest::newRow("two tensors padded") << file({}, {a, tinfo("b", {2, 2}, 0, 32)}, 48) << 2;
  }
  void accepts_edge_cases() {
    QFETCH(std::string, bytes);
    QFETCH(int, tensors);
    std::unique_ptr<GgufFile> f;
    const QString msg = error_of([&] { f = parse(bytes); });
    QVERIFY2(msg.isEmpty(), qPrintable(msg));
    QCOMPARE(int(f->tensors().size()), tensors);
    touch_all(*f);
  }

  // ---------------------------------------------------------------- corrupt files (§1.7 1-14)
  void rejects_corrupt_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<QString>("expected");
    const std::string a = tinfo("a", {4}, 0, 0);
    const std::string good = one_tensor(a);
    const std::string big = u64(UINT64_MAX), half = u64(uint64_t(1) << 63);

    // 1: tiny files and bad magic
    QTest::newRow("1 empty file") << std::string()
                                  << "t.gguf: file is 0 bytes, too small for the 4-byte magic: not a GGUF file "
                                     "(byte offset 0)";
    QTest::newRow("1 1 byte") << std::string("G") << "file is 1 bytes, too small";
    QTest::newRow("1 2 bytes") << std::string("GG") << "file is 2 bytes";
    QTest::newRow("1 3 bytes") << std::string("GGU") << "file is 3 bytes";
    QTest::newRow("1 magic FUGG") << "FUGG" + good.substr(4) << "bad magic 'FUGG' (0x47475546), expected 'GGUF'";
    QTest::newRow("1 magic lower-case") << "gguf" + good.substr(4) << "bad magic 'gguf'";
    QTest::newRow("1 safetensors file") << u64(8) + "{}      "
                                        << "bad magic";
    QTest::newRow("1 truncated in version")
        << std::string("GGUF\x03\x00", 6) << "version: needs 4 bytes but the file ends after 2";
    QTest::newRow("1 truncated in tensor count") << "GGUF" + u32(3) + "\x01"
                                                 << "tensor count: needs 8 bytes";
    QTest::newRow("1 truncated in kv count") << "GGUF" + u32(3) + u64(0) << "metadata kv count: needs 8 bytes";

    // 2: versions
    auto ver = [&](uint32_t v) { return "GGUF" + u32(v) + good.substr(8); };
    QTest::newRow("2 version 0") << ver(0) << "version 0 not supported (only versions 2 and 3) (byte offset 4)";
    QTest::newRow("2 version 1") << ver(1) << "version 1 not supported";
    QTest::newRow("2 version 4") << ver(4) << "version 4 not supported";
    QTest::newRow("2 version 0xffffffff") << ver(0xffffffffu) << "version 4294967295 not supported";
    QTest::newRow("2 byte-swapped 3") << ver(0x03000000u)
                                      << "version field 0x03000000 looks byte-swapped: big-endian file not supported";
    QTest::newRow("2 byte-swapped 2") << ver(0x02000000u) << "big-endian file not supported";

    // 3: counts vs file size (64-byte files)
    auto counts = [](uint64_t nt, uint64_t nkv) { return head(nt, nkv) + std::string(40, '\0'); };
    QTest::newRow("3 n_tensors 2^64-1") << counts(UINT64_MAX, 0)
                                        << "tensor count 18446744073709551615 and metadata kv count 0 cannot fit in "
                                           "the 40 bytes after the header (byte offset 8)";
    QTest::newRow("3 n_tensors 2^63") << counts(uint64_t(1) << 63, 0) << "tensor count 9223372036854775808";
    QTest::newRow("3 n_tensors SIZE_MAX/336+1") << counts(UINT64_MAX / 336 + 1, 0) << "cannot fit in the 40 bytes";
    QTest::newRow("3 n_tensors 2") << counts(2, 0) << "tensor count 2 and metadata kv count 0 cannot fit";
    QTest::newRow("3 n_kv 2^64-1") << counts(0, UINT64_MAX) << "metadata kv count 18446744073709551615 cannot fit";
    QTest::newRow("3 n_kv 2^63") << counts(0, uint64_t(1) << 63) << "metadata kv count 9223372036854775808 cannot fit";
    QTest::newRow("3 n_kv SIZE_MAX/48+1") << counts(0, UINT64_MAX / 48 + 1) << "cannot fit";
    QTest::newRow("3 both large") << counts(1, 2)
                                  << "tensor count 1 and metadata kv count 2 cannot fit in the 40 bytes";
    QTest::newRow("3 n_kv fits the bound, file ends")
        << head(0, 2) + kv_u32("k", 1) + std::string(14, '\0') << "metadata kv #1 key";

    // 4: string lengths
    auto key_len = [&](const std::string& len) { return head(0, 1) + len + std::string(40, 'k'); };
    QTest::newRow("4 key length 2^64-1") << key_len(big)
                                         << "metadata kv #0 key: length 18446744073709551615 exceeds the 65535-byte "
                                            "limit (byte offset 24)";
    QTest::newRow("4 key length 2^63") << key_len(half)
                                       << "key: length 9223372036854775808 exceeds the 65535-byte limit";
    QTest::newRow("4 key length file size + 1")
        << key_len(u64(73))
        << "metadata kv #0 key: length 73 runs past the end of the file (40 bytes left) (byte offset 24)";
    QTest::newRow("4 key length 1 GiB + 1") << key_len(u64((1ull << 30) + 1)) << "exceeds the 65535-byte limit";
    QTest::newRow("4 key length 0") << head(0, 1) + kv_u32("", 1) << "metadata kv #0 key '' is empty (byte offset 24)";
    QTest::newRow("4 key length 65536") << head(0, 1) + kv_u32(std::string(65536, 'k'), 1)
                                        << "key: length 65536 exceeds the 65535-byte limit";
    QTest::newRow("4 non-ASCII key") << head(0, 1) + kv_u32("caf\xc3\xa9", 1)
                                     << "key 'caf\\xc3\\xa9' byte 3 is 0xc3, not printable ASCII";
    QTest::newRow("4 non-UTF-8 key") << head(0, 1) + kv_u32("k\xff", 1) << "byte 1 is 0xff, not printable ASCII";
    QTest::newRow("4 key with NUL") << head(0, 1) + kv_u32(std::string("a\0b", 3), 1) << "byte 1 is 0x00";
    QTest::newRow("4 key with space") << head(0, 1) + kv_u32("a b", 1) << "byte 1 is 0x20";
    auto val_len = [&](const std::string& len) { return head(0, 1) + str("k") + u32(8) + len + std::string(40, 'v'); };
    QTest::newRow("4 string value length 2^64-1")
        << val_len(big) << "metadata 'k': length 18446744073709551615 exceeds the 67108864-byte limit (byte offset 37)";
    QTest::newRow("4 string value length 2^63") << val_len(half) << "exceeds the 67108864-byte limit";
    QTest::newRow("4 string value length file size + 1")
        << val_len(u64(86)) << "metadata 'k': length 86 runs past the end of the file (40 bytes left)";
    QTest::newRow("4 string value length 1 GiB + 1")
        << val_len(u64((1ull << 30) + 1)) << "exceeds the 67108864-byte limit";
    QTest::newRow("4 string value truncated length") << head(0, 1) + str("k") + u32(8) + "\x05\x00"
                                                     << "metadata 'k' length: needs 8 bytes";
    QTest::newRow("4 string array element length 2^64-1")
        << head(0, 1) + kv_arr("k", 8, 2, str("ok") + big) + std::string(8, 'x')
        << "metadata 'k'[1]: length 18446744073709551615 exceeds";
    QTest::newRow("4 tensor name length past EOF")
        << head(1, 0) + u64(1000) + std::string(40, 'n') << "tensor #0 name: length 1000 exceeds the 64-byte limit";

    // 5: keys, value types, arrays
    QTest::newRow("5 duplicate key") << one_tensor(a, 16, {kv_u32("k", 1), kv_u32("k", 2)})
                                     << "duplicate metadata key 'k'";
    QTest::newRow("5 duplicate key, other type")
        << one_tensor(a, 16, {kv_u32("k", 1), kv_str("k", "x")}) << "duplicate metadata key 'k'";
    QTest::newRow("5 value type 13") << one_tensor(a, 16, {kv("k", 13, u32(0))})
                                     << "metadata 'k' value type: unknown value type 13 (0x0000000d) (byte offset 33)";
    QTest::newRow("5 value type -1") << one_tensor(a, 16, {kv("k", 0xffffffffu, u32(0))})
                                     << "unknown value type 4294967295 (0xffffffff)";
    QTest::newRow("5 nested array") << one_tensor(a, 16, {kv_arr("k", 9, 1, u32(0) + u64(1) + "x")})
                                    << "metadata 'k': nested arrays are not supported (byte offset 37)";
    QTest::newRow("5 array element type 13")
        << one_tensor(a, 16, {kv_arr("k", 13, 1, "x")}) << "metadata 'k' array element type: unknown value type 13";
    QTest::newRow("5 array len 2^40 of u8") << one_tensor(a, 16, {kv_arr("k", 0, uint64_t(1) << 40, "xyz")})
                                            << "metadata 'k': 1099511627776 elements of UINT8 need more than the";
    QTest::newRow("5 array len 2^64-1 of u64")
        << one_tensor(a, 16, {kv_arr("k", 10, UINT64_MAX, "")}) << "18446744073709551615 elements of UINT64 need more";
    QTest::newRow("5 array len 2^61 of f64 (wraps x8)")
        << one_tensor(a, 16, {kv_arr("k", 12, uint64_t(1) << 61, "")}) << "elements of FLOAT64 need more";
    QTest::newRow("5 string array len 2^40") << one_tensor(a, 16, {kv_arr("k", 8, uint64_t(1) << 40, "")})
                                             << "metadata 'k': array of 1099511627776 strings cannot fit";
    QTest::newRow("5 array truncated") << head(0, 1) + kv_arr("k", 4, 3, u32(1) + u32(2))
                                       << "metadata 'k': 3 elements of UINT32 need more than the 8 bytes left";
    QTest::newRow("5 scalar truncated") << head(0, 1) + str("k") + u32(10) + "\x01\x02"
                                        << "metadata 'k': needs 8 bytes but the file ends after 2 (file is 39 bytes) "
                                           "(byte offset 37)";

    // 6: bool
    QTest::newRow("6 bool 0x02") << one_tensor(a, 16, {kv("k", 7, "\x02")})
                                 << "metadata 'k': bool byte is 2, must be 0 or 1 (byte offset 37)";
    QTest::newRow("6 bool 0xff") << one_tensor(a, 16, {kv("k", 7, "\xff")}) << "bool byte is 255";
    QTest::newRow("6 bool array element") << one_tensor(a, 16, {kv_arr("k", 7, 3, std::string("\x01\x00\x02", 3))})
                                          << "metadata 'k'[2]: bool byte is 2, must be 0 or 1 (byte offset 51)";

    // 7: general.alignment
    auto al = [&](const std::string& entry) { return one_tensor(a, 16, {entry}); };
    QTest::newRow("7 alignment 0") << al(kv_u32("general.alignment", 0))
                                   << "t.gguf: metadata 'general.alignment': is 0";
    QTest::newRow("7 alignment 3") << al(kv_u32("general.alignment", 3))
                                   << "'general.alignment': 3 is not a power of two";
    QTest::newRow("7 alignment 13") << al(kv_u32("general.alignment", 13)) << "13 is not a power of two";
    QTest::newRow("7 alignment 2^31") << al(kv_u32("general.alignment", 1u << 31))
                                      << "2147483648 exceeds the 1048576-byte limit";
    QTest::newRow("7 alignment 2 MiB") << al(kv_u32("general.alignment", 1u << 21)) << "exceeds the 1048576-byte limit";
    QTest::newRow("7 alignment as INT32")
        << al(kv("general.alignment", 5, u32(32))) << "metadata 'general.alignment': must be UINT32, stored as INT32";
    QTest::newRow("7 alignment as STRING")
        << al(kv_str("general.alignment", "32")) << "must be UINT32, stored as STRING";
    QTest::newRow("7 alignment as array")
        << al(kv_arr("general.alignment", 4, 1, u32(32))) << "must be UINT32, stored as array of UINT32";
    QTest::newRow("7 alignment as UINT64") << al(kv("general.alignment", 10, u64(32))) << "stored as UINT64";
    QTest::newRow("7 offset not multiple of alignment 64")
        << file({kv_u32("general.alignment", 64)}, {a, tinfo("b", {4}, 0, 32)}, 80, 64)
        << "tensor 'b': offset 32 is not a multiple of the alignment 64";

    // 8: tensor names
    QTest::newRow("8 name length 65") << one_tensor(tinfo(std::string(65, 'x'), {4}, 0, 0))
                                      << "tensor #0 name: length 65 exceeds the 64-byte limit";
    QTest::newRow("8 name length 2^64-1") << head(1, 0) + big + std::string(40, 'x')
                                          << "tensor #0 name: length 18446744073709551615 exceeds the 64-byte limit";
    QTest::newRow("8 duplicate tensor names")
        << file({}, {a, tinfo("a", {4}, 0, 32)}, 48) << "duplicate tensor name 'a'";
    QTest::newRow("8 name with NUL") << one_tensor(tinfo(std::string("a\0b", 3), {4}, 0, 0))
                                     << "tensor #0 name 'a\\x00b' contains a NUL byte at 1";
    QTest::newRow("8 name with newline") << one_tensor(tinfo("a\nb", {4}, 0, 0))
                                         << "byte 1 is 0x0a, a control character";
    QTest::newRow("8 empty name") << one_tensor(tinfo("", {4}, 0, 0)) << "tensor #0 name '' is empty";

    // 9: n_dims and dims
    QTest::newRow("9 n_dims 0") << one_tensor(tinfo("a", {}, 0, 0)) << "tensor 'a': n_dims 0 out of range 1..4";
    QTest::newRow("9 n_dims 5") << one_tensor(tinfo("a", {4, 1, 1, 1, 1}, 0, 0)) << "n_dims 5 out of range 1..4";
    QTest::newRow("9 n_dims 2^32-1") << one_tensor(str("a") + u32(0xffffffffu) + u64(4) + u32(0) + u64(0))
                                     << "n_dims 4294967295 out of range";
    QTest::newRow("9 dim 0 with large others") << one_tensor(tinfo("a", {4, 0, uint64_t(1) << 40}, 0, 0))
                                               << "tensor 'a' ne[1] is 0: empty tensors are not supported";
    QTest::newRow("9 ne[0] = 0") << one_tensor(tinfo("a", {0}, 0, 0)) << "ne[0] is 0";
    QTest::newRow("9 dim -1 as int64") << one_tensor(tinfo("a", {UINT64_MAX}, 0, 0))
                                       << "ne[0] = 18446744073709551615 (-1 as int64) exceeds the 2^62 limit";
    QTest::newRow("9 dim INT64_MIN") << one_tensor(tinfo("a", {uint64_t(1) << 63}, 0, 0))
                                     << "(-9223372036854775808 as int64) exceeds";
    QTest::newRow("9 dims truncated") << head(1, 0) + str("a") + u32(4) + u64(4) + u64(4) + u64(4) + "\x01\x02"
                                      << "tensor 'a' ne[3]: needs 8 bytes but the file ends after 2";

    // 10: shape products and byte sizes
    QTest::newRow("10 [2^32, 2^32]") << one_tensor(tinfo("a", {1ull << 32, 1ull << 32}, 0, 0))
                                     << "tensor 'a': element count of shape [4294967296, 4294967296] overflows int64";
    QTest::newRow("10 [2^31, 2^31, 2^2]")
        << one_tensor(tinfo("a", {1ull << 31, 1ull << 31, 2}, 0, 0)) << "overflows int64";
    QTest::newRow("10 Q4_0 ne0 = 2^62") << one_tensor(tinfo("a", {1ull << 62}, 2, 0))
                                        << "tensor 'a': data [0, 2594073385365405696) of the data section";
    QTest::newRow("10 Q8_0 [2^62, 2]") << one_tensor(tinfo("a", {1ull << 62, 2}, 8, 0))
                                       << "element count of shape [4611686018427387904, 2] overflows int64";
    QTest::newRow("10 F32 ne0 = 2^62 (stride -> 0)")
        << one_tensor(tinfo("a", {1ull << 62}, 0, 0))
        << "tensor 'a': byte size of 4611686018427387904 F32 elements overflows";
    QTest::newRow("10 F32 ne0 = SIZE_MAX/4")
        << one_tensor(tinfo("a", {UINT64_MAX / 4}, 0, 0)) << "byte size of 4611686018427387903 F32 elements overflows";
    QTest::newRow("10 F16 [2^61, 2]") << one_tensor(tinfo("a", {1ull << 61, 2}, 1, 0))
                                      << "byte size of 4611686018427387904 F16 elements overflows";
    QTest::newRow("10 Q8_0 ne0 not multiple of 32")
        << one_tensor(tinfo("a", {33}, 8, 0)) << "tensor 'a': ne[0] = 33 is not a multiple of the Q8_0 block size 32";
    QTest::newRow("10 Q4_0 ne0 = 16") << one_tensor(tinfo("a", {16, 2}, 2, 0))
                                      << "ne[0] = 16 is not a multiple of the Q4_0 block size 32";
    QTest::newRow("10 Q6_K ne0 = 128") << one_tensor(tinfo("a", {128}, 14, 0))
                                       << "not a multiple of the Q6_K block size 256";
    QTest::newRow("10 Q4_K ne0 = 32") << one_tensor(tinfo("a", {32, 8}, 12, 0)) << "Q4_K block size 256";

    // 11: tensor types
    auto ty = [&](uint32_t t) { return one_tensor(tinfo("a", {256}, t, 0), 1024); };
    QTest::newRow("11 type -1") << ty(0xffffffffu) << "tensor 'a': unknown tensor type 4294967295";
    QTest::newRow("11 type 4 (removed)") << ty(4) << "tensor type 4 (removed Q4_2) is not supported";
    QTest::newRow("11 type 5 (removed)") << ty(5) << "tensor type 5 (removed Q4_3) is not supported";
    QTest::newRow("11 type 31 (removed)") << ty(31) << "tensor type 31 (removed Q4_0_4_4)";
    QTest::newRow("11 type 32 (removed)") << ty(32) << "tensor type 32 (removed Q4_0_4_8)";
    QTest::newRow("11 type 33 (removed)") << ty(33) << "tensor type 33 (removed Q4_0_8_8)";
    QTest::newRow("11 type 40 (>= GGML_TYPE_COUNT)") << ty(40) << "unknown tensor type 40";
    QTest::newRow("11 type 9 (Q8_1, unsupported)") << ty(9) << "tensor type 9 (Q8_1) is not supported";
    QTest::newRow("11 type 23 (IQ4_XS, unsupported)") << ty(23) << "(IQ4_XS) is not supported";

    // 12: offsets
    const std::string b32 = tinfo("b", {4}, 0, 32);
    QTest::newRow("12 offset not aligned")
        << one_tensor(tinfo("a", {4}, 0, 4), 20) << "tensor 'a': offset 4 is not a multiple of the alignment 32";
    QTest::newRow("12 first offset not 0") << one_tensor(tinfo("a", {4}, 0, 32), 48)
                                           << "tensor 'a': offset 32 must be 0 (tensors are stored in order, each at "
                                              "the aligned end of the previous one): it leaves a gap";
    QTest::newRow("12 not the running sum (gap)")
        << file({}, {a, tinfo("b", {4}, 0, 64)}, 80) << "tensor 'b': offset 64 must be 32";
    QTest::newRow("12 overlapping") << file({}, {tinfo("a", {16}, 0, 0), tinfo("b", {4}, 0, 32)}, 64)
                                    << "tensor 'b': offset 32 must be 64";
    QTest::newRow("12 overlapping, same offset") << file({}, {a, tinfo("b", {4}, 0, 0)}, 48)
                                                 << "offset 0 must be 32 (tensors are stored in order, each at the "
                                                    "aligned end of the previous one): it overlaps the previous tensor";
    QTest::newRow("12 descending") << file({}, {tinfo("a", {4}, 0, 32), tinfo("b", {4}, 0, 0)}, 48)
                                   << "tensor 'a': offset 32 must be 0";
    QTest::newRow("12 past EOF") << one_tensor(tinfo("a", {1024}, 0, 0), 16)
                                 << "tensor 'a': data [0, 4096) of the data section (file bytes 64..4160) runs past "
                                    "the end of the 80-byte file";
    QTest::newRow("12 offset 2^64-32 (offset + nbytes overflows)")
        << one_tensor(tinfo("a", {4}, 0, UINT64_MAX - 31)) << "offset 18446744073709551584 must be 0";
    QTest::newRow("12 data section 1 byte short") << one_tensor(a, 15) << "runs past the end of the 79-byte file";
    QTest::newRow("12 second tensor 1 byte short") << file({}, {a, b32}, 47) << "tensor 'b': data [32, 48)";
    QTest::newRow("12 data section start past EOF") << head(1, 0) + a
                                                    << "data section would start at 64 (header end padded to 32), past "
                                                       "the end of the 57-byte file (byte offset 57)";
    QTest::newRow("12 trailing data after the last tensor")
        << one_tensor(a, 33) << "trailing data: 1 bytes after the last tensor's padding (byte offset 96)";
    QTest::newRow("12 trailing data, no tensors")
        << head(0, 0) + std::string(40, 'x') << "trailing data: 32 bytes after the header padding (byte offset 32)";

    // 13: the mem-size overflow pair: two I8 tensors of 0x7FFFFFFFFFFFFFC0 elements
    QTest::newRow("13 two huge I8 tensors")
        << file({}, {tinfo("a", {0x7FFFFFFFFFFFFFC0ull}, 24, 0),
                     tinfo("b", {0x7FFFFFFFFFFFFFC0ull}, 24, 0x7FFFFFFFFFFFFFC0ull)})
        << "tensor 'a' ne[0] = 9223372036854775744 (9223372036854775744 as int64) exceeds the 2^62 limit";
    QTest::newRow("13 two 2^62 I8 tensors")
        << file({}, {tinfo("a", {1ull << 62}, 24, 0), tinfo("b", {1ull << 62}, 24, 1ull << 62)}, 64)
        << "tensor 'a': data [0, 4611686018427387904)";
  }
  void rejects_corrupt() {
    QFETCH(std::string, bytes);
    QFETCH(QString, expected);
    const QString msg = error_of([&] { parse(bytes); });
    QVERIFY2(!msg.isEmpty(), "accepted a corrupt file");
    QVERIFY2(!msg.startsWith("<non-engine"), qPrintable(msg));
    QVERIFY2(msg.startsWith("t.gguf: "), qPrintable(msg));
    QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
  }

  // 14: type confusion in vocab metadata: the typed getters refuse another element type.
  void typed_getters_refuse_other_types_data() {
    QTest::addColumn<std::string>("entry");
    QTest::addColumn<QString>("call");
    QTest::addColumn<QString>("expected");
    const auto s = [](const char* x) { return QString::fromUtf8(x); };
    QTest::newRow("14 scores as u8[]") << kv_arr("tokenizer.ggml.scores", 0, 4, "abcd") << s("f32_array")
                                       << s("t.gguf: metadata 'tokenizer.ggml.scores': expected array of FLOAT32, "
                                            "stored as array of UINT8");
    QTest::newRow("14 scores as i8[]") << kv_arr("tokenizer.ggml.scores", 1, 4, "abcd") << s("f32_array")
                                       << s("stored as array of INT8");
    QTest::newRow("14 scores as f64[]") << kv_arr("tokenizer.ggml.scores", 12, 1, u64(0)) << s("f32_array")
                                        << s("stored as array of FLOAT64");
    QTest::newRow("14 scores as f32 scalar")
        << kv("tokenizer.ggml.scores", 6, f32b(1)) << s("f32_array") << s("stored as FLOAT32");
    QTest::newRow("14 token_type as i8[]")
        << kv_arr("tokenizer.ggml.token_type", 1, 2, "\x01\x02") << s("i32_array")
        << s("metadata 'tokenizer.ggml.token_type': expected array of INT32, stored as array of INT8");
    QTest::newRow("14 token_type as u32[]")
        << kv_arr("tokenizer.ggml.token_type", 4, 1, u32(1)) << s("i32_array") << s("stored as array of UINT32");
    QTest::newRow("14 tokens as i32[]") << kv_arr("tokenizer.ggml.tokens", 5, 1, u32(1)) << s("string_array")
                                        << s("metadata 'tokenizer.ggml.tokens': expected array of STRING, stored as "
                                             "array of INT32");
    QTest::newRow("14 tokens as string") << kv_str("tokenizer.ggml.tokens", "abc") << s("string_array")
                                         << s("stored as STRING");
    QTest::newRow("14 bos id as i32") << kv("tokenizer.ggml.bos_token_id", 5, u32(1)) << s("u32")
                                      << s("expected UINT32, stored as INT32");
    QTest::newRow("14 bos id as u64") << kv("tokenizer.ggml.bos_token_id", 10, u64(1)) << s("u32")
                                      << s("expected UINT32, stored as UINT64");
    QTest::newRow("string as u32") << kv_u32("general.architecture", 7) << s("string")
                                   << s("expected STRING, stored as UINT32");
    QTest::newRow("bool as u8") << kv("k", 0, "\x01") << s("bool") << s("expected BOOL, stored as UINT8");
    QTest::newRow("f32 as f64") << kv("k", 12, u64(0)) << s("f32") << s("expected FLOAT32, stored as FLOAT64");
    QTest::newRow("i32 as u32") << kv_u32("k", 1) << s("i32") << s("expected INT32, stored as UINT32");
    QTest::newRow("u64 as u32") << kv_u32("k", 1) << s("u64") << s("expected UINT64, stored as UINT32");
    QTest::newRow("uint from i32") << kv("k", 5, u32(1)) << s("uint")
                                   << s("expected an unsigned integer, stored as INT32");
    QTest::newRow("missing key") << kv_u32("other", 1) << s("u32") << s("t.gguf: metadata key 'k' is missing");
    QTest::newRow("architecture missing")
        << kv_u32("other", 1) << s("arch") << s("metadata key 'general.architecture' is missing");
    QTest::newRow("architecture upper-case")
        << kv_str("general.architecture", "GPT2") << s("arch") << s("'GPT2' must match [a-z0-9_]+");
    QTest::newRow("architecture empty") << kv_str("general.architecture", "") << s("arch")
                                        << s("'general.architecture' is empty");
  }
  void typed_getters_refuse_other_types() {
    QFETCH(std::string, entry);
    QFETCH(QString, call);
    QFETCH(QString, expected);
    std::unique_ptr<GgufFile> f;
    const QString load = error_of([&] { f = parse(head(0, 1) + entry); });
    QVERIFY2(load.isEmpty(), qPrintable(load));
    std::string key = f->metadata()[0].first;
    if (call == "u32" || call == "i32" || call == "u64" || call == "uint" || call == "bool" || call == "f32") {
      if (expected.contains("missing")) key = "k";
    }
    const QString msg = error_of([&] {
      if (call == "f32_array") f->get_f32_array(key);
      else if (call == "i32_array") f->get_i32_array(key);
      else if (call == "string_array") f->get_string_array(key);
      else if (call == "string") f->get_string(key);
      else if (call == "u32") f->get_u32(key);
      else if (call == "i32") f->get_i32(key);
      else if (call == "u64") f->get_u64(key);
      else if (call == "uint") f->get_uint(key);
      else if (call == "bool") f->get_bool(key);
      else if (call == "f32") f->get_f32(key);
      else if (call == "arch") f->architecture();
    });
    QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
  }

  void corrupt_file_on_disk_names_path() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("bad.gguf").toStdString();
    {
      std::ofstream o(path, std::ios::binary);
      o << "FUGG" << std::string(20, '\0');
    }
    QVERIFY(error_of([&] { GgufFile::open(path); }).startsWith(QString::fromStdString(path) + ": bad magic"));
    const std::string missing = dir.filePath("missing.gguf").toStdString();
    QCOMPARE(error_of([&] { GgufFile::open(missing); }),
             QString::fromStdString(missing) + ": cannot open: No such file or directory");
  }

  // ---------------------------------------------------------------- writer refusals
  void writer_refuses_what_the_reader_would_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty key") << 0 << "metadata key '' is empty";
    QTest::newRow("duplicate key") << 1 << "duplicate metadata key 'k'";
    QTest::newRow("non-ASCII key") << 2 << "not printable ASCII";
    QTest::newRow("empty tensor name") << 3 << "tensor name '' is empty";
    QTest::newRow("65-byte tensor name") << 4 << "over the 64-byte limit";
    QTest::newRow("duplicate tensor") << 5 << "duplicate tensor name 'a'";
    QTest::newRow("zero dim") << 6 << "ne[0] = 0 out of range";
    QTest::newRow("5 dims") << 7 << "5 dims, must be 1..4";
    QTest::newRow("partial block") << 8 << "ne[0] = 16 is not a multiple of the Q8_0 block size 32";
    QTest::newRow("unsupported type") << 9 << "tensor type 9 (Q8_1) is not supported";
    QTest::newRow("alignment 3") << 10 << "alignment 3 is not a power of two";
    QTest::newRow("alignment key disagrees") << 11 << "disagrees with the requested alignment 32";
    QTest::newRow("alignment key wrong type") << 12 << "'general.alignment' must be UINT32, given INT32";
    QTest::newRow("null data") << 13 << "data is null";
    QTest::newRow("no dims") << 14 << "0 dims, must be 1..4";
  }
  void writer_refuses_what_the_reader_would() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    const float d[64] = {};
    GgufMetadata md;
    std::vector<GgufTensorToWrite> ts = {{"a", GgmlType::F32, {4}, d}};
    uint32_t align = 32;
    switch (which) {
      case 0: md = {{"", GgufValue(uint32_t(1))}}; break;
      case 1: md = {{"k", GgufValue(uint32_t(1))}, {"k", GgufValue(uint32_t(2))}}; break;
      case 2: md = {{"caf\xc3\xa9", GgufValue(uint32_t(1))}}; break;
      case 3: ts[0].name = ""; break;
      case 4: ts[0].name = std::string(65, 'x'); break;
      case 5: ts.push_back(ts[0]); break;
      case 6: ts[0].shape = {0}; break;
      case 7: ts[0].shape = {4, 1, 1, 1, 1}; break;
      case 8: ts[0] = {"a", GgmlType::Q8_0, {16}, d}; break;
      case 9: ts[0].type = static_cast<GgmlType>(9); break;
      case 10: align = 3; break;
      case 11: md = {{"general.alignment", GgufValue(uint32_t(64))}}; break;
      case 12: md = {{"general.alignment", GgufValue(int32_t(32))}}; break;
      case 13: ts[0].data = nullptr; break;
      case 14: ts[0].shape = {}; break;
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("w.gguf").toStdString();
    const QString msg = error_of([&] { engine::io::write_gguf(path, md, ts, align); });
    QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
    QVERIFY(!QFile::exists(QString::fromStdString(path)));
    QVERIFY(error_of([&] { engine::io::encode_gguf(md, ts, align); }).contains(expected));
  }

  // ---------------------------------------------------------------- truncation and mutation
  void every_truncation_fails() {
    const std::string good = small_valid_image();
    auto f = parse(good);
    const auto& last = f->tensors().back();
    const uint64_t last_end = f->data_offset() + last.offset + last.nbytes;
    QVERIFY(last_end < good.size());  // there is trailing padding to test too
    for (size_t len = 0; len < good.size(); ++len) {
      const std::string cut = good.substr(0, len);  // own allocation: ASan catches reads past `len`
      const QString msg = error_of([&] { parse(cut); });
      if (len < last_end)
        QVERIFY2(!msg.isEmpty() && msg.startsWith("t.gguf: "), qPrintable(QString("len %1: %2").arg(len).arg(msg)));
      else  // only the last tensor's padding is missing: still a complete file
        QVERIFY2(msg.isEmpty(), qPrintable(QString("len %1: %2").arg(len).arg(msg)));
    }
    QVERIFY(error_of([&] { parse(good + std::string(32, '\0')); }).contains("trailing data: 32 bytes"));
  }

  void every_byte_corruption_is_clean() {
    const std::string good = small_valid_image();
    int accepted = 0, rejected = 0;
    for (size_t i = 0; i < good.size(); ++i) {
      for (const uint8_t x : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ x);
        try {
          auto f = parse(bad);
          touch_all(*f);
          ++accepted;
        } catch (const engine::Error&) {
          ++rejected;
        }
      }
    }
    QVERIFY(rejected > 0);
    qInfo("single-byte corruptions: %d rejected, %d still valid", rejected, accepted);
  }

  void random_mutations_are_clean_data() {
    QTest::addColumn<std::string>("good");
    QTest::newRow("small file") << small_valid_image();
    const auto q4 = pattern(18 * 2, 9), bf = pattern(2 * 5, 4);
    const auto all =
        engine::io::encode_gguf(all_value_types(),
                                {{"q4", GgmlType::Q4_0, {32, 2}, q4.data()}, {"bf", GgmlType::BF16, {5}, bf.data()}},
                                64);
    QTest::newRow("every value type, alignment 64") << std::string(all.begin(), all.end());
  }
  void random_mutations_are_clean() {
    QFETCH(std::string, good);
    QVERIFY(parse(good) != nullptr);
    std::mt19937_64 rng(20261202);
    const std::string tokens[] =
        {u64(UINT64_MAX), u64(uint64_t(1) << 63), u64(0), u64(1), u64(65), u32(9), u32(8), u32(0xffffffffu), u32(30),
         u32(14),         std::string(1, '\0'),   "\x02"};
    int accepted = 0;
    for (int iter = 0; iter < 5000; ++iter) {
      std::string bad = good;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !bad.empty(); ++e) {
        const size_t pos = rng() % bad.size();
        switch (rng() % 5) {
          case 0:
          case 1: bad[pos] = static_cast<char>(rng()); break;
          case 2: bad.replace(pos, std::min<size_t>(8, bad.size() - pos), tokens[rng() % std::size(tokens)]); break;
          case 3: bad.erase(pos, 1 + rng() % 8); break;
          case 4: bad.insert(pos, tokens[rng() % std::size(tokens)]); break;
        }
      }
      try {
        auto f = parse(bad);
        touch_all(*f);
        ++accepted;
      } catch (const engine::Error&) {
      }
    }
    qInfo("random mutations: %d of 5000 still valid", accepted);
  }

  // ---------------------------------------------------------------- independent writer (gguf-py)
  void reads_gguf_py_fixture() {
    const QString dir = QStringLiteral(WB_TEST_DATA_DIR "/gguf");
    QFile jf(dir + "/small.json");
    if (!jf.exists()) QSKIP("tests/data/gguf/small.json missing (run tests/tools/make_gguf_fixture.py)");
    QVERIFY(jf.open(QIODevice::ReadOnly));
    const QJsonObject want = QJsonDocument::fromJson(jf.readAll()).object();
    auto f = GgufFile::open((dir + "/small.gguf").toStdString());
    QCOMPARE(int(f->version()), want["version"].toInt());
    QCOMPARE(int(f->alignment()), want["alignment"].toInt());
    const QJsonObject md = want["metadata"].toObject();
    QCOMPARE(int(f->metadata().size()), md.size());
    for (auto it = md.begin(); it != md.end(); ++it) {
      const std::string key = it.key().toStdString();
      const GgufValue* v = f->find_value(key);
      QVERIFY2(v != nullptr, key.c_str());
      const QString type = it.value().toArray()[0].toString();
      const QJsonValue val = it.value().toArray()[1];
      QCOMPARE(QString::fromStdString(v->type_text()).replace("array of ", "ARRAY:"), type);
      const std::string what = "fixture " + key;
      if (type == "STRING") QCOMPARE(QString::fromStdString(v->string(what)), val.toString());
      else if (type == "UINT8") QCOMPARE(int(v->scalar<uint8_t>(what)), val.toInt());
      else if (type == "INT8") QCOMPARE(int(v->scalar<int8_t>(what)), val.toInt());
      else if (type == "UINT16") QCOMPARE(int(v->scalar<uint16_t>(what)), val.toInt());
      else if (type == "INT16") QCOMPARE(int(v->scalar<int16_t>(what)), val.toInt());
      else if (type == "UINT32") QCOMPARE(double(v->scalar<uint32_t>(what)), val.toDouble());
      else if (type == "INT32") QCOMPARE(v->scalar<int32_t>(what), val.toInt());
      else if (type == "UINT64") QCOMPARE(QString::number(v->scalar<uint64_t>(what)), val.toString());
      else if (type == "INT64") QCOMPARE(QString::number(v->scalar<int64_t>(what)), val.toString());
      else if (type == "FLOAT32") QCOMPARE(double(v->scalar<float>(what)), val.toDouble());
      else if (type == "FLOAT64") QCOMPARE(v->scalar<double>(what), val.toDouble());
      else if (type == "BOOL") QCOMPARE(v->scalar<bool>(what), val.toBool());
      else if (type == "ARRAY:STRING") {
        const auto& got = v->string_array(what);
        const QJsonArray exp = val.toArray();
        QCOMPARE(int(got.size()), exp.size());
        for (int i = 0; i < exp.size(); ++i) QCOMPARE(QString::fromStdString(got[size_t(i)]), exp[i].toString());
      } else if (type == "ARRAY:FLOAT32") {
        const auto got = v->array_of<float>(what);
        const QJsonArray exp = val.toArray();
        QCOMPARE(int(got.size()), exp.size());
        for (int i = 0; i < exp.size(); ++i) QCOMPARE(double(got[size_t(i)]), exp[i].toDouble());
      } else if (type == "ARRAY:INT32") {
        const auto got = v->array_of<int32_t>(what);
        const QJsonArray exp = val.toArray();
        QCOMPARE(int(got.size()), exp.size());
        for (int i = 0; i < exp.size(); ++i) QCOMPARE(got[size_t(i)], exp[i].toInt());
      } else {
        QFAIL(qPrintable("fixture type not handled: " + type));
      }
    }
    QCOMPARE(f->architecture(), std::string("tinytest"));
    const QJsonArray ts = want["tensors"].toArray();
    QCOMPARE(int(f->tensors().size()), ts.size());
    for (int i = 0; i < ts.size(); ++i) {
      const QJsonObject e = ts[i].toObject();
      const auto& t = f->tensors()[size_t(i)];
      QCOMPARE(QString::fromStdString(t.name), e["name"].toString());
      QCOMPARE(int(t.type), e["type"].toInt());
      std::vector<uint64_t> shape;
      for (const auto& d : e["shape"].toArray()) shape.push_back(uint64_t(d.toInt()));
      QCOMPARE(t.shape, shape);
      const QByteArray data = QByteArray::fromHex(e["data_hex"].toString().toLatin1());
      QCOMPARE(t.nbytes, uint64_t(data.size()));
      QVERIFY(std::memcmp(t.data, data.constData(), size_t(data.size())) == 0);
    }
    // F32 values decode as written: ne [4,3,2] = numpy (2,3,4), x*0.5-3.
    const auto* w = f->find("blk.0.f32");
    float v5;
    std::memcpy(&v5, w->data + 5 * 4, 4);
    QCOMPARE(v5, 5 * 0.5f - 3.0f);
  }
};

QTEST_APPLESS_MAIN(TestGguf)
#include "test_gguf.moc"
