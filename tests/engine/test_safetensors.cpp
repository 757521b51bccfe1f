// Tests for the safetensors reader/writer and the file primitives under it (MappedFile,
// write_file_atomic).
//
// The corrupt-file table covers reliability.md §1.7 cases 19-22 one row each; all bad files are
// generated here (no third-party PoC binaries). On top of the table: every truncation of a valid
// file, every single-byte corruption and a seeded random-mutation loop must end in engine::Error
// or a valid parse, never a crash (run this binary under ASan/UBSan to make "never" mean something).
// write_file_atomic failure tests use only mechanisms that also work as root: a missing directory,
// a directory in the way of the rename, and RLIMIT_FSIZE to make write() fail mid-file like a full disk.
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/mapped_file.h"
#include "engine/io/safetensors.h"
#include "support/error_of.h"

using engine::io::SafetensorsFile;
using engine::io::StDType;
using engine::io::StTensorToWrite;

Q_DECLARE_METATYPE(std::string)

namespace {

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file image: length prefix, the header text as given, `data_size` filler bytes.
std::string image(const std::string& header, uint64_t data_size = 0) {
  return le64(header.size()) + header + std::string(data_size, '\x11');
}

std::string entry(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

std::string f32x2(const std::string& name, uint64_t begin) {  // a valid 8-byte F32 [2] entry
  return "\"" + name + "\":" + entry("F32", "[2]", "[" + std::to_string(begin) + "," + std::to_string(begin + 8) + "]");
}

std::unique_ptr<SafetensorsFile> parse(const std::string& bytes) {
  return SafetensorsFile::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t.safetensors");
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

QStringList dir_entries(const QString& dir) {
  return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
}

// Deterministic bytes for a tensor of `n` bytes.
std::vector<uint8_t> pattern(uint64_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i * 7 + (i >> 8));
  return v;
}

// Reads every byte of every tensor and converts float ones, so ASan sees any bad pointer.
uint64_t touch_all(const SafetensorsFile& f) {
  uint64_t sum = 0;
  for (const auto& t : f.tensors()) {
    for (uint64_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
    if (t.dtype == StDType::F32 || t.dtype == StDType::F16 || t.dtype == StDType::BF16 || t.dtype == StDType::F64)
      sum += f.read_f32(t).size();
  }
  return sum;
}

// A small valid file with metadata, several dtypes, a scalar and a zero-size tensor.
std::string small_valid_file(const QString& dir) {
  const std::string path = (dir + "/small.safetensors").toStdString();
  const float a[3] = {1.0f, -2.5f, 3.25f};
  const uint16_t h[2] = {0x3c00, 0xc000};
  const int32_t s = 42;
  std::vector<StTensorToWrite> ts = {{"a", StDType::F32, {3}, a},
                                     {"h", StDType::F16, {2, 1}, h},
                                     {"s", StDType::I32, {}, &s},
                                     {"z", StDType::F32, {0, 4}, nullptr}};
  engine::io::write_safetensors(path, ts, {{"format", "pt"}});
  return read_file(path);
}

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT

 private slots:
  // ---------------------------------------------------------------- round trips
  void round_trip_each_dtype_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QString>("name");
    const std::pair<StDType, const char*> all[] = {{StDType::F64, "F64"}, {StDType::F32, "F32"},
                                                   {StDType::F16, "F16"}, {StDType::BF16, "BF16"},
                                                   {StDType::I64, "I64"}, {StDType::I32, "I32"},
                                                   {StDType::I16, "I16"}, {StDType::I8, "I8"},
                                                   {StDType::U8, "U8"},   {StDType::BOOL, "BOOL"}};
    for (const auto& [t, n] : all) QTest::newRow(n) << static_cast<int>(t) << QString(n);
  }
  void round_trip_each_dtype() {
    QFETCH(int, dtype);
    QFETCH(QString, name);
    const auto t = static_cast<StDType>(dtype);
    QCOMPARE(QString::fromUtf8(engine::io::st_dtype_name(t).data()).left(name.size()), name);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("one.safetensors").toStdString();
    const std::vector<uint64_t> shape = {3, 5};
    const auto bytes = pattern(15 * engine::io::st_dtype_size(t), 3);
    engine::io::write_safetensors(path, {{"w", t, shape, bytes.data()}});
    auto f = SafetensorsFile::open(path);
    QCOMPARE(f->tensors().size(), size_t(1));
    const auto* w = f->find("w");
    QVERIFY(w != nullptr);
    QCOMPARE(static_cast<int>(w->dtype), dtype);
    QCOMPARE(w->shape, shape);
    QCOMPARE(w->numel(), uint64_t(15));
    QCOMPARE(w->nbytes, uint64_t(bytes.size()));
    QVERIFY(std::memcmp(w->data, bytes.data(), bytes.size()) == 0);
    QVERIFY(f->metadata().empty());
    QCOMPARE(f->path(), path);
  }

  void round_trip_mixed_file() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("mixed.safetensors").toStdString();
    const auto b_f64 = pattern(2 * 8, 1), b_bf16 = pattern(7 * 2, 2), b_u8 = pattern(3, 3), b_i64 = pattern(4 * 8, 4);
    const float scalar = 0.5f;
    std::vector<StTensorToWrite> ts = {
        {"model.embed.weight", StDType::F64, {2, 1}, b_f64.data()},
        {"empty.first", StDType::F32, {0}, nullptr},  // zero-size at offset 0
        {"odd.u8", StDType::U8, {3}, b_u8.data()},    // makes later data unaligned
        {"h.0.bf16", StDType::BF16, {7}, b_bf16.data()},
        {"empty.middle", StDType::I32, {4, 0, 9}, nullptr},  // zero-size between tensors
        {"scalar", StDType::F32, {}, &scalar},               // rank 0: one element
        {"ids", StDType::I64, {2, 2}, b_i64.data()},
        {"empty.last", StDType::BF16, {0, 18446744073709551615ull}, nullptr},  // 0 * huge = 0, no overflow
        {"unicode.\xc3\xa9\xe2\x82\xac", StDType::U8, {0}, nullptr},
    };
    const std::map<std::string, std::string> meta = {{"format", "pt"},
                                                     {"note", "caf\xc3\xa9 \"quoted\" \\ {}"},
                                                     {"", "empty key"}};
    engine::io::write_safetensors(path, ts, meta);

    const std::string raw = read_file(path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(raw[i]);
    QCOMPARE(n % 8, uint64_t(0));  // writer pads so the data section is 8-byte aligned
    QCOMPARE(raw[8], '{');
    uint64_t total = 0;
    for (const auto& t : ts) {
      uint64_t e = engine::io::st_dtype_size(t.dtype);
      for (uint64_t d : t.shape) e *= d;
      total += e;
    }
    QCOMPARE(uint64_t(raw.size()), 8 + n + total);

    auto f = SafetensorsFile::open(path);
    QCOMPARE(f->metadata(), meta);
    QCOMPARE(f->tensors().size(), ts.size());
    for (const auto& w : ts) {
      const auto* r = f->find(w.name);
      QVERIFY2(r != nullptr, w.name.c_str());
      QCOMPARE(r->dtype, w.dtype);
      QCOMPARE(r->shape, w.shape);
      if (r->nbytes > 0) QVERIFY(std::memcmp(r->data, w.data, r->nbytes) == 0);
    }
    QCOMPARE(f->find("scalar")->numel(), uint64_t(1));
    QCOMPARE(f->read_f32(*f->find("scalar")), std::vector<float>{0.5f});
    QCOMPARE(f->find("empty.middle")->numel(), uint64_t(0));
    QVERIFY(f->read_f32(*f->find("empty.first")).empty());
    QVERIFY(f->find("missing") == nullptr);
    // tensors() is in data order; every data pointer lies inside the file.
    const uint8_t* base = f->tensors().front().data;
    for (size_t i = 1; i < f->tensors().size(); ++i) QVERIFY(f->tensors()[i].data >= f->tensors()[i - 1].data);
    QCOMPARE(f->tensors().back().data + f->tensors().back().nbytes, base + total);
    QCOMPARE(touch_all(*f) > 0, true);
  }

  void empty_and_metadata_only_files() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string p1 = dir.filePath("empty.safetensors").toStdString();
    engine::io::write_safetensors(p1, {});
    QCOMPARE(read_file(p1), le64(8) + "{}      ");
    QVERIFY(SafetensorsFile::open(p1)->tensors().empty());
    const std::string p2 = dir.filePath("meta.safetensors").toStdString();
    engine::io::write_safetensors(p2, {}, {{"k", "v"}});
    auto f = SafetensorsFile::open(p2);
    QVERIFY(f->tensors().empty());
    QCOMPARE(f->metadata().at("k"), std::string("v"));
  }

  void read_f32_conversions() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("conv.safetensors").toStdString();
    const uint8_t pad = 7;
    const float f32[4] = {1.5f, -2.0f, std::numeric_limits<float>::infinity(), 3.0e-42f /* subnormal */};
    const uint16_t f16[5] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0xfc00};  // 1, -2, 65504, 2^-24, -inf
    const uint16_t bf16[3] = {0x3f80, 0xc0a0, 0x7f80};                 // 1, -5, inf
    const double f64[5] = {0.1, -1e300, 1e300, 3.5, -0.0};
    const int32_t i32[1] = {5};
    engine::io::write_safetensors(path, {{"pad", StDType::U8, {1}, &pad},  // everything after it is unaligned
                                         {"f32", StDType::F32, {4}, f32},
                                         {"f16", StDType::F16, {5}, f16},
                                         {"pad2", StDType::U8, {1}, &pad},
                                         {"bf16", StDType::BF16, {3}, bf16},
                                         {"f64", StDType::F64, {5}, f64},
                                         {"i32", StDType::I32, {1}, i32}});
    auto f = SafetensorsFile::open(path);
    QVERIFY(reinterpret_cast<uintptr_t>(f->find("f32")->data) % 4 != 0);  // really unaligned
    QCOMPARE(f->read_f32(*f->find("f32")), std::vector<float>(f32, f32 + 4));
    QCOMPARE(f->read_f32(*f->find("f16")), (std::vector<float>{1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24),
                                                               -std::numeric_limits<float>::infinity()}));
    QCOMPARE(f->read_f32(*f->find("bf16")), (std::vector<float>{1.0f, -5.0f, std::numeric_limits<float>::infinity()}));
    const auto d = f->read_f32(*f->find("f64"));
    QCOMPARE(d[0], 0.1f);
    QCOMPARE(d[1], -std::numeric_limits<float>::infinity());  // out of float range saturates, no UB
    QCOMPARE(d[2], std::numeric_limits<float>::infinity());
    QCOMPARE(d[3], 3.5f);
    QVERIFY(d[4] == 0.0f && std::signbit(d[4]));
    QVERIFY(error_of([&] { f->read_f32(*f->find("i32")); }).contains("dtype I32 cannot be read as f32"));
    // A tensor description that is not one of this file's is refused, not dereferenced.
    engine::io::StTensor forged = *f->find("f32");
    forged.nbytes = 1 << 20;
    QVERIFY(error_of([&] { f->read_f32(forged); }).contains("does not belong to this file"));
    forged = *f->find("f32");
    forged.name = "nope";
    QVERIFY(error_of([&] { f->read_f32(forged); }).contains("does not belong to this file"));
    // An identical copy is fine.
    const engine::io::StTensor copy = *f->find("bf16");
    QCOMPARE(f->read_f32(copy).size(), size_t(3));
  }

  void accepts_edge_cases_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<int>("tensors");
    QTest::newRow("empty header padded to 8") << image("{}      ") << 0;
    QTest::newRow("padding with tab and newline") << image("{}\t\n\r   ") << 0;
    QTest::newRow("unpadded 9-byte header") << image("{       }") << 0;
    QTest::newRow("zero-size only") << image("{\"z\":" + entry("F32", "[0]", "[0,0]") + "}") << 1;
    QTest::newRow("zero-size dims with huge other dim")
        << image("{\"z\":" + entry("F16", "[0,18446744073709551615]", "[0,0]") + "}") << 1;
    QTest::newRow("scalar") << image("{\"s\":" + entry("F32", "[]", "[0,4]") + "}", 4) << 1;
    QTest::newRow("zero-size in the middle")
        << image("{" + f32x2("a", 0) + ",\"z\":" + entry("I8", "[0]", "[8,8]") + "," + f32x2("b", 8) + "}", 16) << 3;
    QTest::newRow("zero-size at the end")
        << image("{" + f32x2("a", 0) + ",\"z\":" + entry("I8", "[0]", "[8,8]") + "}", 8) << 2;
    QTest::newRow("two zero-size at one offset")
        << image("{\"y\":" + entry("I8", "[0]", "[0,0]") + ",\"z\":" + entry("U8", "[0]", "[0,0]") + "}") << 2;
    QTest::newRow("keys out of data order") << image("{" + f32x2("b", 8) + "," + f32x2("a", 0) + "}", 16) << 2;
    QTest::newRow("metadata with escapes")
        << image("{\"__metadata__\":{\"a\\u0000b\":\"x\\ny\",\"k\":\"\"}," + f32x2("a", 0) + "}", 8) << 1;
    QTest::newRow("escaped name") << image("{\"\\u00e9\\/x\":" + entry("U8", "[1]", "[0,1]") + "}", 1) << 1;
    QTest::newRow("BOOL tensor") << image("{\"m\":" + entry("BOOL", "[3]", "[0,3]") + "}", 3) << 1;
  }
  void accepts_edge_cases() {
    QFETCH(std::string, bytes);
    QFETCH(int, tensors);
    std::unique_ptr<SafetensorsFile> f;
    const QString msg = error_of([&] { f = parse(bytes); });
    QVERIFY2(msg.isEmpty(), qPrintable(msg));
    QCOMPARE(int(f->tensors().size()), tensors);
    touch_all(*f);
  }

  // ---------------------------------------------------------------- corrupt files (§1.7 19-22)
  void rejects_corrupt_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<QString>("expected");
    const std::string a = f32x2("a", 0);

    // 19: header length and header text
    QTest::newRow("19 empty file") << std::string()
                                   << "t.safetensors: file is 0 bytes, too small for the 8-byte header length";
    QTest::newRow("19 7-byte file") << std::string(7, '\0') << "file is 7 bytes";
    QTest::newRow("19 N = 0") << le64(0) << "header length 0 (bytes 0..8) is below the 8-byte minimum";
    QTest::newRow("19 N = 0 with data") << le64(0) + "{}"
                                        << "is below the 8-byte minimum";
    QTest::newRow("19 N = 7") << le64(7) + "{}     "
                              << "header length 7 (bytes 0..8) is below the 8-byte minimum";
    QTest::newRow("19 N = 100000001") << le64(100000001) + "{}      "
                                      << "header length 100000001 (bytes 0..8) exceeds the 100000000-byte limit";
    QTest::newRow("19 N = 2^64-1") << le64(UINT64_MAX) + "{}      "
                                   << "exceeds the 100000000-byte limit";
    QTest::newRow("19 N = 2^63") << le64(uint64_t(1) << 63) + "{}      "
                                 << "exceeds the 100000000-byte limit";
    QTest::newRow("19 N high bytes 0xff") << std::string("\x08\x00\x00\x00\x00\xff\xff\xff", 8) + "{}      "
                                          << "exceeds the";
    QTest::newRow("19 N > file length") << le64(100) + "{}      "
                                        << "header length 100 (bytes 0..8) runs past the end of the 16-byte file";
    QTest::newRow("19 N = file length - 8 + 1") << le64(9) + "{}      "
                                                << "runs past the end";
    QTest::newRow("19 leading space") << image(" {}     ") << "header must begin with '{', byte 8 is 0x20";
    QTest::newRow("19 leading newline") << image("\n{}     ") << "byte 8 is 0x0a";
    QTest::newRow("19 UTF-8 BOM") << image("\xef\xbb\xbf{}     ") << "byte 8 is 0xef";
    QTest::newRow("19 array header") << image("[1,2]   ") << "header must begin with '{'";
    QTest::newRow("19 string header") << image("\"{}\"    ") << "header must begin with '{'";
    QTest::newRow("19 trailing garbage") << image("{}xxxxxx") << "t.safetensors header: invalid JSON at byte 10";
    QTest::newRow("19 trailing second object") << image("{}  {}  ") << "invalid JSON";
    QTest::newRow("19 trailing NUL padding") << image(std::string("{}\0\0\0\0\0\0", 8)) << "invalid JSON at byte 10";
    QTest::newRow("19 NUL then garbage") << image(std::string("{}  \0{\"a\":1", 11)) << "raw NUL byte";
    QTest::newRow("19 non-UTF-8 key") << image("{\"\xff\":1}   ") << "t.safetensors header: invalid UTF-8 at byte 10";
    QTest::newRow("19 non-UTF-8 overlong")
        << image("{\"__metadata__\":{\"k\":\"\xc0\xaf\"}}") << "invalid UTF-8 at byte 30";
    QTest::newRow("19 not JSON") << image("{abc}   ") << "invalid JSON";
    QTest::newRow("19 truncated JSON") << image("{\"a\":{\"dtype\"") << "invalid JSON";
    QTest::newRow("19 NaN in header") << image("{\"a\":NaN}") << "invalid JSON";
    QTest::newRow("19 comment") << image("{/*x*/}    ") << "invalid JSON";
    QTest::newRow("19 deep nesting") << image("{\"a\":[[[[[[[[[[[[]]]]]]]]]]]]}") << "nesting deeper than 8 levels";
    QTest::newRow("19 100k nesting") << image("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}")
                                     << "nesting deeper than 8 levels";

    // 20: keys, metadata, names
    QTest::newRow("20 duplicate tensor key")
        << image("{" + a + "," + f32x2("a", 8) + "}", 16)
        << "t.safetensors header: invalid JSON: duplicate key 'a' at the top level";
    QTest::newRow("20 duplicate field in entry")
        << image("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8)
        << "duplicate key 'dtype' in object at /a";
    QTest::newRow("20 duplicate __metadata__")
        << image("{\"__metadata__\":{},\"__metadata__\":{}}") << "duplicate key '__metadata__'";
    QTest::newRow("20 duplicate key in __metadata__")
        << image("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}") << "duplicate key 'k' in object at /__metadata__";
    QTest::newRow("20 duplicate via escape") << image("{\"a\":1,\"\\u0061\":2}") << "duplicate key 'a'";
    QTest::newRow("20 metadata int value")
        << image("{\"__metadata__\":{\"k\":1}}") << "t.safetensors: __metadata__ value of 'k' must be a string, got 1";
    QTest::newRow("20 metadata null value") << image("{\"__metadata__\":{\"k\":null}}") << "must be a string, got null";
    QTest::newRow("20 metadata object value")
        << image("{\"__metadata__\":{\"k\":{}}}") << "must be a string, got an object";
    QTest::newRow("20 metadata array value")
        << image("{\"__metadata__\":{\"k\":[\"v\"]}}") << "must be a string, got an array";
    QTest::newRow("20 metadata bool value") << image("{\"__metadata__\":{\"k\":true}}") << "must be a string, got true";
    QTest::newRow("20 metadata not an object")
        << image("{\"__metadata__\":[\"k\",\"v\"]}") << "__metadata__ must be an object of strings, got an array";
    QTest::newRow("20 metadata string") << image("{\"__metadata__\":\"k=v\"}") << "__metadata__ must be an object";
    QTest::newRow("20 metadata null") << image("{\"__metadata__\":null}") << "__metadata__ must be an object";
    QTest::newRow("20 NUL in name") << image("{\"a\\u0000b\":" + entry("F32", "[2]", "[0,8]") + "}", 8)
                                    << "t.safetensors: tensor name 'a\\0b' contains a NUL byte";
    QTest::newRow("20 empty name") << image("{\"\":" + entry("F32", "[2]", "[0,8]") + "}", 8)
                                   << "a tensor has an empty name";
    QTest::newRow("20 entry is a number") << image("{\"a\":5}   ") << "tensor 'a': entry must be an object, got 5";
    QTest::newRow("20 entry is an array") << image("{\"a\":[0,8]}") << "entry must be an object, got an array";
    QTest::newRow("20 entry is null") << image("{\"a\":null}") << "entry must be an object, got null";
    QTest::newRow("20 missing dtype") << image("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8)
                                      << "t.safetensors: tensor 'a': missing required field 'dtype'";
    QTest::newRow("20 missing shape") << image("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8)
                                      << "missing required field 'shape'";
    QTest::newRow("20 missing data_offsets")
        << image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8) << "missing required field 'data_offsets'";
    QTest::newRow("20 extra field") << image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}",
                                             8)
                                    << "tensor 'a': unexpected field 'x'";
    QTest::newRow("20 dtype not a string") << image("{\"a\":{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}}", 8)
                                           << "tensor 'a': field 'dtype' must be a string, got 4";

    // 21: offsets
    QTest::newRow("21 gap between tensors")
        << image("{" + a + "," + f32x2("b", 12) + "}", 20) << "data bytes [8, 12) (file bytes";
    QTest::newRow("21 gap names tensor") << image("{" + a + "," + f32x2("b", 12) + "}", 20) << "gap before tensor 'b'";
    QTest::newRow("21 first tensor not at 0") << image("{" + f32x2("a", 4) + "}", 12) << "data bytes [0, 4)";
    QTest::newRow("21 overlap") << image("{" + a + ",\"b\":" + entry("F32", "[1]", "[4,8]") + "}", 8)
                                << "tensor 'b': data_offsets [4, 8) overlap tensor 'a' which ends at 8";
    QTest::newRow("21 identical offsets") << image("{" + a + "," + f32x2("b", 0) + "}", 8) << "overlap";
    QTest::newRow("21 end before begin") << image("{\"a\":" + entry("F32", "[0]", "[8,4]") + "}", 8)
                                         << "tensor 'a': data_offsets [8, 4] end before begin";
    QTest::newRow("21 trailing bytes (polyglot)") << image("{" + a + "}", 8) + "extra_bogus_data_for_polyglot_file"
                                                  << "tensors cover 8 of the 42 data bytes";
    QTest::newRow("21 one trailing byte") << image("{" + a + "}", 9) << "belong to no tensor (trailing data)";
    QTest::newRow("21 buffer 2 bytes short")
        << image("{" + a + "}", 6) << "tensor 'a': data_offsets [0, 8) run past the end of the 6-byte data section";
    QTest::newRow("21 offsets past EOF") << image("{\"a\":" + entry("U8", "[1000000]", "[0,1000000]") + "}", 8)
                                         << "run past the end";
    QTest::newRow("21 end = 2^64-1") << image("{\"a\":" + entry("F32", "[2]", "[0,18446744073709551615]") + "}", 8)
                                     << "run past the end";
    QTest::newRow("21 negative begin") << image("{\"a\":" + entry("F32", "[2]", "[-1,7]") + "}", 8)
                                       << "tensor 'a': data_offsets[0] must be an integer in [0, "
                                          "18446744073709551615], got -1";
    QTest::newRow("21 float offsets") << image("{\"a\":" + entry("F32", "[2]", "[0.0,8.0]") + "}", 8)
                                      << "data_offsets[0] must be an integer";
    QTest::newRow("21 string offsets") << image("{\"a\":" + entry("F32", "[2]", "[\"0\",\"8\"]") + "}", 8)
                                       << "must be an integer";
    QTest::newRow("21 three offsets") << image("{\"a\":" + entry("F32", "[2]", "[0,8,8]") + "}", 8)
                                      << "field 'data_offsets' must be an array of 2 integers, got an array of 3 "
                                         "elements";
    QTest::newRow("21 one offset") << image("{\"a\":" + entry("F32", "[2]", "[8]") + "}", 8) << "array of 2 integers";
    QTest::newRow("21 offsets not an array")
        << image("{\"a\":" + entry("F32", "[2]", "{\"b\":0}") + "}", 8) << "field 'data_offsets' must be an array";
    QTest::newRow("21 offset 2^64") << image("{\"a\":" + entry("F32", "[2]", "[0,18446744073709551616]") + "}", 8)
                                    << "must be an integer";

    // 22: shape x dtype
    QTest::newRow("22 size mismatch (ref test_invalid_info)")
        << image("{\"a\":" + entry("I32", "[2,2]", "[0,4]") + "}", 4)
        << "tensor 'a': data_offsets [0, 4) hold 4 bytes but dtype I32 with shape [2, 2] needs 16";
    QTest::newRow("22 size mismatch, too big") << image("{\"a\":" + entry("F32", "[1]", "[0,8]") + "}", 8) << "needs 4";
    QTest::newRow("22 shape product overflow")
        << image("{\"a\":" + entry("F32", "[2,18446744073709551614]", "[0,8]") + "}", 8)
        << "tensor 'a': shape [2, 18446744073709551614] element count: integer overflow";
    QTest::newRow("22 shape [2^32, 2^32]")
        << image("{\"a\":" + entry("U8", "[4294967296,4294967296]", "[0,8]") + "}", 8) << "integer overflow";
    QTest::newRow("22 byte size overflow")
        << image("{\"a\":" + entry("F32", "[2,9223372036854775807]", "[0,8]") + "}", 8)
        << "byte size of 18446744073709551614 F32 elements: integer overflow";
    QTest::newRow("22 bytes = 2^64") << image("{\"a\":" + entry("F32", "[4611686018427387904]", "[0,8]") + "}", 8)
                                     << "integer overflow";
    QTest::newRow("22 huge but fits u64")
        << image("{\"a\":" + entry("U8", "[1152921504606846976]", "[0,1152921504606846976]") + "}", 8)
        << "run past the end";
    QTest::newRow("22 unknown dtype") << image("{\"a\":" + entry("F7", "[2]", "[0,8]") + "}", 8)
                                      << "tensor 'a': unsupported dtype \"F7\"";
    QTest::newRow("22 lowercase dtype") << image("{\"a\":" + entry("f32", "[2]", "[0,8]") + "}", 8)
                                        << "unsupported dtype \"f32\"";
    QTest::newRow("22 empty dtype") << image("{\"a\":" + entry("", "[2]", "[0,8]") + "}", 8)
                                    << "unsupported dtype \"\"";
    QTest::newRow("22 F8_E4M3 (unsupported)")
        << image("{\"a\":" + entry("F8_E4M3", "[8]", "[0,8]") + "}", 8) << "unsupported dtype";
    QTest::newRow("22 U32 (unsupported)")
        << image("{\"a\":" + entry("U32", "[2]", "[0,8]") + "}", 8) << "unsupported dtype";
    QTest::newRow("22 sub-byte F4 odd count")
        << image("{\"a\":" + entry("F4", "[3]", "[0,2]") + "}", 2) << "unsupported dtype \"F4\"";
    QTest::newRow("22 dtype with NUL") << image("{\"a\":" + entry("F32\\u0000", "[2]", "[0,8]") + "}", 8)
                                       << "unsupported dtype";
    QTest::newRow("22 negative dim") << image("{\"a\":" + entry("F32", "[-1]", "[0,8]") + "}", 8)
                                     << "tensor 'a': shape[0] must be an integer in [0, 18446744073709551615], got -1";
    QTest::newRow("22 fractional dim") << image("{\"a\":" + entry("F32", "[2.5]", "[0,8]") + "}", 8)
                                       << "shape[0] must be an integer";
    QTest::newRow("22 integral float dim")
        << image("{\"a\":" + entry("F32", "[1,2.0]", "[0,8]") + "}", 8) << "shape[1] must be an integer";
    QTest::newRow("22 string dim") << image("{\"a\":" + entry("F32", "[\"2\"]", "[0,8]") + "}", 8) << "got \"2\"";
    QTest::newRow("22 null dim") << image("{\"a\":" + entry("F32", "[null]", "[0,8]") + "}", 8) << "got null";
    QTest::newRow("22 nested dim") << image("{\"a\":" + entry("F32", "[[2]]", "[0,8]") + "}", 8) << "got an array";
    QTest::newRow("22 dim 2^64") << image("{\"a\":" + entry("F32", "[18446744073709551616]", "[0,8]") + "}", 8)
                                 << "must be an integer";
    QTest::newRow("22 dim 1e400") << image("{\"a\":" + entry("F32", "[1e400]", "[0,8]") + "}", 8) << "number overflow";
    QTest::newRow("22 shape not an array") << image("{\"a\":" + entry("F32", "2", "[0,8]") + "}", 8)
                                           << "tensor 'a': field 'shape' must be an array, got 2";
    QTest::newRow("22 shape null") << image("{\"a\":" + entry("F32", "null", "[0,8]") + "}", 8)
                                   << "field 'shape' must be an array";
  }
  void rejects_corrupt() {
    QFETCH(std::string, bytes);
    QFETCH(QString, expected);
    const QString msg = error_of([&] { parse(bytes); });
    QVERIFY2(!msg.isEmpty(), "accepted a corrupt file");
    QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
    QVERIFY2(!msg.startsWith("<non-engine"), qPrintable(msg));
  }

  void corrupt_file_on_disk_names_path() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("bad.safetensors").toStdString();
    write_plain(path, image("{" + f32x2("a", 0) + "}", 9));
    QVERIFY(
        error_of([&] { SafetensorsFile::open(path); }).startsWith(QString::fromStdString(path) + ": tensors cover 8"));
    const std::string missing = dir.filePath("missing.safetensors").toStdString();
    QCOMPARE(error_of([&] { SafetensorsFile::open(missing); }),
             QString::fromStdString(missing) + ": cannot open: No such file or directory");
  }

  void header_at_the_size_cap() {
    // N == 100 MB exactly passes the length checks and fails in the JSON (the reference's
    // "a" * MAX_HEADER_SIZE test); one more byte fails on the cap. A sparse file keeps it cheap.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const uint64_t n : {uint64_t(100000000), uint64_t(100000001)}) {
      const std::string path = dir.filePath("big.safetensors").toStdString();
      {
        const std::string head = le64(n) + "{";
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        QVERIFY(fd >= 0);
        QCOMPARE(::write(fd, head.data(), head.size()), ssize_t(head.size()));
        QCOMPARE(::ftruncate(fd, off_t(8 + n)), 0);
        ::close(fd);
      }
      const QString msg = error_of([&] { SafetensorsFile::open(path); });
      if (n == 100000000) QVERIFY2(msg.contains("header: invalid JSON at byte 9"), qPrintable(msg));
      else QVERIFY2(msg.contains("exceeds the 100000000-byte limit"), qPrintable(msg));
    }
  }

  void every_truncation_fails() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string good = small_valid_file(dir.path());
    QVERIFY(parse(good) != nullptr);
    for (size_t len = 0; len < good.size(); ++len) {
      const std::string cut = good.substr(0, len);  // own allocation: ASan catches reads past `len`
      const QString msg = error_of([&] { parse(cut); });
      QVERIFY2(!msg.isEmpty() && !msg.startsWith("<non-engine"), qPrintable(QString("len %1: %2").arg(len).arg(msg)));
    }
    // One appended byte is a polyglot attempt too.
    QVERIFY(!error_of([&] { parse(good + "x"); }).isEmpty());
  }

  void every_byte_corruption_is_clean() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string good = small_valid_file(dir.path());
    int accepted = 0, rejected = 0;
    for (size_t i = 0; i < good.size(); ++i) {
      for (const uint8_t x : {uint8_t(0x01), uint8_t(0x20), uint8_t(0x80), uint8_t(0xff)}) {
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
    qInfo("single-byte corruptions: %d rejected, %d still valid (data bytes)", rejected, accepted);
  }

  void random_mutations_are_clean() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string good = small_valid_file(dir.path());
    std::mt19937_64 rng(20240326);
    const char* tokens[] = {"{",
                            "}",
                            "[",
                            "]",
                            ",",
                            ":",
                            "\"",
                            "0",
                            "-1",
                            "1e400",
                            "18446744073709551615",
                            "\\u0000",
                            "null",
                            "F32",
                            "__metadata__",
                            "data_offsets",
                            "shape",
                            "dtype",
                            " ",
                            "\xff"};
    int accepted = 0;
    for (int iter = 0; iter < 20000; ++iter) {
      std::string bad = good;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !bad.empty(); ++e) {
        const size_t pos = rng() % bad.size();
        switch (rng() % 4) {
          case 0: bad[pos] = static_cast<char>(rng()); break;
          case 1: bad.erase(pos, 1 + rng() % 4); break;
          case 2: bad.insert(pos, tokens[rng() % std::size(tokens)]); break;
          case 3: bad.resize(pos); break;
        }
      }
      // Keep the length prefix consistent half the time, so mutations reach the JSON and offset checks.
      if ((iter & 1) && bad.size() >= 8) {
        const uint64_t hl = std::min<uint64_t>(bad.size() - 8, good.size() - 8 - 32 + rng() % 64);
        bad.replace(0, 8, le64(hl));
      }
      try {
        auto f = parse(bad);
        touch_all(*f);
        ++accepted;
      } catch (const engine::Error&) {
      }
    }
    qInfo("random mutations: %d of 20000 still valid", accepted);
  }

  void writer_refuses_what_the_reader_would() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("w.safetensors").toStdString();
    const float v[2] = {1, 2};
    auto err = [&](std::vector<StTensorToWrite> ts, std::map<std::string, std::string> meta = {}) {
      return error_of([&] { engine::io::write_safetensors(path, ts, meta); });
    };
    QVERIFY(err({{"a", StDType::F32, {2}, v}, {"a", StDType::F32, {2}, v}}).contains("duplicate tensor name"));
    QVERIFY(err({{"", StDType::F32, {2}, v}}).contains("empty name"));
    QVERIFY(err({{std::string("a\0b", 3), StDType::F32, {2}, v}}).contains("NUL"));
    QVERIFY(err({{"__metadata__", StDType::F32, {2}, v}}).contains("reserved"));
    QVERIFY(err({{"a", StDType::F32, {2}, nullptr}}).contains("data is null"));
    QVERIFY(err({{"a\xff", StDType::F32, {2}, v}}).contains("not valid UTF-8"));
    QVERIFY(err({{"a", StDType::F32, {2}, v}}, {{"k", "\xc0\xaf"}}).contains("not valid UTF-8"));
    QVERIFY(err({{"a", StDType::F32, {uint64_t(1) << 62, 8}, v}}).contains("integer overflow"));
    QVERIFY(!QFileInfo::exists(QString::fromStdString(path)));  // nothing half-written
    QVERIFY(dir_entries(dir.path()).isEmpty());
  }

  // ---------------------------------------------------------------- MappedFile / write_file_atomic
  void mapped_file_basics() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string empty = dir.filePath("empty").toStdString();
    write_plain(empty, "");
    auto e = engine::io::MappedFile::open(empty);
    QCOMPARE(e->size(), uint64_t(0));
    QVERIFY(e->data() != nullptr);
    const std::string full = dir.filePath("full").toStdString();
    write_plain(full, "hello");
    auto f = engine::io::MappedFile::open(full);
    QCOMPARE(std::string(reinterpret_cast<const char*>(f->data()), f->size()), std::string("hello"));
    QCOMPARE(error_of([&] { engine::io::MappedFile::open(dir.filePath("nope").toStdString()); }),
             dir.filePath("nope") + ": cannot open: No such file or directory");
    QCOMPARE(error_of([&] { engine::io::MappedFile::open(dir.path().toStdString()); }),
             dir.path() + ": not a regular file");
    // A FIFO must be refused without blocking on open.
    const std::string fifo = dir.filePath("fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    QCOMPARE(error_of([&] { engine::io::MappedFile::open(fifo); }),
             QString::fromStdString(fifo) + ": not a regular file");
    // Empty files are handled by the readers with a clean error.
    QVERIFY(error_of([&] { SafetensorsFile::open(empty); }).contains("file is 0 bytes"));
  }

  void atomic_write_creates_and_replaces() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("out.bin").toStdString();
    engine::io::write_file_atomic(path, "first", 5);
    QCOMPARE(read_file(path), std::string("first"));
    QCOMPARE(::chmod(path.c_str(), 0640), 0);
    engine::io::write_file_atomic(path, std::vector<engine::io::WritePart>{{"sec", 3}, {nullptr, 0}, {"ond", 3}});
    QCOMPARE(read_file(path), std::string("second"));
    struct stat st {};
    QCOMPARE(::stat(path.c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0640));  // replaced file keeps its permissions
    engine::io::write_file_atomic(path, nullptr, 0);
    QCOMPARE(read_file(path), std::string());
    QCOMPARE(dir_entries(dir.path()), QStringList{"out.bin"});  // no temp file left behind
    // A bare file name writes into the current directory.
    const QString old_cwd = QDir::currentPath();
    QVERIFY(QDir::setCurrent(dir.path()));
    engine::io::write_file_atomic("bare.bin", "x", 1);
    QVERIFY(QDir::setCurrent(old_cwd));
    QCOMPARE(read_file(dir.filePath("bare.bin").toStdString()), std::string("x"));
    QVERIFY(error_of([&] {
              engine::io::write_file_atomic(dir.path().toStdString() + "/", "x", 1);
            }).contains("is not a file path"));
    QVERIFY(error_of([&] { engine::io::write_file_atomic(path, nullptr, 3); }).contains("null data"));
  }

  void atomic_write_missing_directory() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("no/such/dir/out.bin").toStdString();
    const QString msg = error_of([&] { engine::io::write_file_atomic(path, "x", 1); });
    QVERIFY2(msg.startsWith(QString::fromStdString(path) + ": cannot create temporary file"), qPrintable(msg));
    QVERIFY2(msg.contains("No such file or directory"), qPrintable(msg));
  }

  void atomic_write_rename_refused_keeps_destination() {
    // A non-empty directory where the file should go: everything succeeds up to rename(), which
    // fails (EISDIR). The directory and its contents stay, and the fully written temp file is removed.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString target = dir.filePath("model.safetensors");
    QVERIFY(QDir().mkdir(target));
    write_plain((target + "/keep").toStdString(), "keep me");
    const QString msg = error_of([&] { engine::io::write_file_atomic(target.toStdString(), "new", 3); });
    QVERIFY2(msg.startsWith(target + ": cannot rename temporary file"), qPrintable(msg));
    QVERIFY2(msg.contains("Is a directory"), qPrintable(msg));
    QCOMPARE(read_file((target + "/keep").toStdString()), std::string("keep me"));
    QCOMPARE(dir_entries(dir.path()), QStringList{"model.safetensors"});
  }

  void atomic_write_disk_full_keeps_old_file() {
    // RLIMIT_FSIZE makes write() past the limit fail with EFBIG, exactly where a full disk fails
    // with ENOSPC, and unlike a read-only directory it also binds root. SIGXFSZ would kill us first:
    // ignore it for the duration.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("model.safetensors").toStdString();
    const float small[2] = {1, 2};
    engine::io::write_safetensors(path, {{"old", StDType::F32, {2}, small}});
    const std::string before = read_file(path);

    struct rlimit saved {};
    QCOMPARE(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = saved;
    lim.rlim_cur = 4096;
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &lim), 0);
    const std::vector<float> big(1 << 16, 3.0f);  // 256 KiB > 4 KiB limit
    const QString msg1 = error_of([&] { engine::io::write_file_atomic(path, big.data(), big.size() * 4); });
    const QString msg2 = error_of([&] {
      engine::io::write_safetensors(path, {{"new", StDType::F32, {big.size()}, big.data()}});
    });
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &saved), 0);
    std::signal(SIGXFSZ, old_handler);

    QVERIFY2(msg1.startsWith(QString::fromStdString(path) + ": writing temporary file"), qPrintable(msg1));
    QVERIFY2(msg1.contains("File too large"), qPrintable(msg1));
    QVERIFY2(msg2.contains("File too large"), qPrintable(msg2));
    QCOMPARE(read_file(path), before);  // old file intact...
    QVERIFY(SafetensorsFile::open(path)->find("old") != nullptr);
    QCOMPARE(dir_entries(dir.path()), QStringList{"model.safetensors"});  // ...and no temp file left
    // With the limit lifted the same write succeeds.
    engine::io::write_safetensors(path, {{"new", StDType::F32, {big.size()}, big.data()}});
    auto reread = SafetensorsFile::open(path);
    QCOMPARE(reread->read_f32(*reread->find("new")).size(), big.size());
  }

  void atomic_write_read_only_directory() {
    if (::geteuid() == 0) QSKIP("running as root: directory permissions do not stop root (covered by the tests above)");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("out.bin").toStdString();
    engine::io::write_file_atomic(path, "old", 3);
    QCOMPARE(::chmod(dir.path().toLocal8Bit().constData(), 0500), 0);
    const QString msg = error_of([&] { engine::io::write_file_atomic(path, "new", 3); });
    ::chmod(dir.path().toLocal8Bit().constData(), 0700);
    QVERIFY2(msg.contains("Permission denied"), qPrintable(msg));
    QCOMPARE(read_file(path), std::string("old"));
  }

  void dtype_helpers() {
    QCOMPARE(engine::dtype_name(engine::DType::F32), std::string_view("f32"));
    QCOMPARE(engine::dtype_name(engine::DType::Q4_0), std::string_view("q4_0"));
    QCOMPARE(engine::dtype_bytes(engine::DType::F32, 10), uint64_t(40));
    QCOMPARE(engine::dtype_bytes(engine::DType::F16, 10), uint64_t(20));
    QCOMPARE(engine::dtype_bytes(engine::DType::BF16, 0), uint64_t(0));
    QCOMPARE(engine::dtype_bytes(engine::DType::Q8_0, 64), uint64_t(68));
    QCOMPARE(engine::dtype_bytes(engine::DType::Q4_0, 96), uint64_t(54));
    QCOMPARE(engine::dtype_bytes(engine::DType::Q4_0, 0), uint64_t(0));
    QVERIFY(error_of([] {
              engine::dtype_bytes(engine::DType::Q8_0, 33);
            }).contains("not a multiple of the 32-element block"));
    QVERIFY(error_of([] { engine::dtype_bytes(engine::DType::Q4_0, 31); }).contains("q4_0"));
    QVERIFY(error_of([] { engine::dtype_bytes(engine::DType::F32, uint64_t(1) << 62); }).contains("overflow"));
    QVERIFY(error_of([] { engine::dtype_bytes(engine::DType::F16, UINT64_MAX); }).contains("overflow"));
    // (2^64 - 32) / 32 blocks * 34 bytes overflows even though the element count is a whole number of blocks.
    QVERIFY(error_of([] { engine::dtype_bytes(engine::DType::Q8_0, UINT64_MAX - 31); }).contains("overflow"));
    // K types: 256 weights per super-block.
    QCOMPARE(engine::dtype_name(engine::DType::Q4_K), std::string_view("q4_K"));
    QCOMPARE(engine::dtype_bytes(engine::DType::Q4_K, 512), uint64_t(288));
    QCOMPARE(engine::dtype_bytes(engine::DType::Q6_K, 256), uint64_t(210));
    QVERIFY(error_of([] { engine::dtype_bytes(engine::DType::Q6_K, 128); }).contains("256-element block"));
    QCOMPARE(engine::dtype_block_elems(engine::DType::Q4_0), uint64_t(32));
    QVERIFY(engine::dtype_is_quantized(engine::DType::Q6_K));
    QVERIFY(!engine::dtype_is_quantized(engine::DType::F16));
  }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
