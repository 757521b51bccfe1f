// Tests for the llm.c GPT-2 checkpoint reader/writer (engine/io/llmc_checkpoint.h).
//
// Round trips (fp32 written by us, bf16 version 5 built by hand), then a corrupt-file table: bad
// magic and versions, every shape letter zero / negative / huge, divisibility and vocab padding
// rules, sizes whose parameter count overflows 64 bits, truncated and over-long files — and every
// truncation of a small valid file. Each must be a clean engine::Error naming the file.
#include <QTemporaryDir>
#include <QtTest>

#include <array>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/llmc_checkpoint.h"
#include "support/error_of.h"

using engine::io::LlmcCheckpoint;

Q_DECLARE_METATYPE(std::string)

namespace {

// Header order in the file: magic, version, maxT, V, L, NH, C, Vp.
struct Dims {
  int64_t maxT, V, L, NH, C, Vp;
};

std::array<uint64_t, 16> counts_of(const Dims& d) {
  const uint64_t Vp = d.Vp, C = d.C, T = d.maxT, L = d.L;
  return {Vp * C, T * C, L * C,         L * C,     L * 3 * C * C, L * 3 * C, L * C * C, L * C,
          L * C,  L * C, L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C,     C,         C};
}

uint64_t total_of(const Dims& d) {
  uint64_t t = 0;
  for (uint64_t n : counts_of(d)) t += n;
  return t;
}

LlmcCheckpoint make_ckpt(const Dims& d) {
  LlmcCheckpoint c;
  c.max_seq_len = int(d.maxT);
  c.vocab_size = int(d.V);
  c.num_layers = int(d.L);
  c.num_heads = int(d.NH);
  c.channels = int(d.C);
  c.padded_vocab_size = int(d.Vp);
  const auto counts = counts_of(d);
  for (size_t i = 0; i < 16; ++i) {
    c.tensors[i].resize(counts[i]);
    for (size_t j = 0; j < counts[i]; ++j) c.tensors[i][j] = float(i) + 0.001f * float(j) - 0.5f;
  }
  return c;
}

std::string le32(int64_t v) {
  const uint32_t u = static_cast<uint32_t>(v);
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}

// A raw file: the 8 header ints (rest of the 256 zero), then `payload` bytes of filler.
std::string raw_file(int64_t magic, int64_t version, const Dims& d, uint64_t payload) {
  std::string s =
      le32(magic) + le32(version) + le32(d.maxT) + le32(d.V) + le32(d.L) + le32(d.NH) + le32(d.C) + le32(d.Vp);
  s.resize(1024, '\0');
  s.append(payload, '\x3f');
  return s;
}

const Dims k_tiny{2, 3, 1, 1, 2, 4};  // 90 parameters
const Dims k_small{8, 10, 2, 2, 4, 16};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

class TestLlmcCheckpoint : public QObject {
  Q_OBJECT

 private slots:
  void round_trip_fp32() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("gpt2.bin").toStdString();
    const LlmcCheckpoint in = make_ckpt(k_small);
    engine::io::write_llmc_checkpoint(path, in);

    const std::string raw = read_file(path);
    QCOMPARE(uint64_t(raw.size()), 1024 + 4 * total_of(k_small));
    QCOMPARE(raw.substr(0, 32), raw_file(20240326, 3, k_small, 0).substr(0, 32));
    QCOMPARE(raw.substr(32, 1024 - 32), std::string(1024 - 32, '\0'));

    const LlmcCheckpoint out = engine::io::read_llmc_checkpoint(path);
    QCOMPARE(out.max_seq_len, 8);
    QCOMPARE(out.vocab_size, 10);
    QCOMPARE(out.padded_vocab_size, 16);
    QCOMPARE(out.num_layers, 2);
    QCOMPARE(out.num_heads, 2);
    QCOMPARE(out.channels, 4);
    for (size_t i = 0; i < 16; ++i) QCOMPARE(out.tensors[i], in.tensors[i]);
  }

  void reads_bf16_version_5() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("gpt2_bf16.bin").toStdString();
    std::string bytes = raw_file(20240326, 5, k_tiny, 0);
    std::vector<float> expected;
    for (uint64_t i = 0; i < total_of(k_tiny); ++i) {
      const uint16_t h = engine::f32_to_bf16(0.25f * float(i) - 3.0f);  // exactly representable
      bytes.push_back(char(h & 0xff));
      bytes.push_back(char(h >> 8));
      expected.push_back(engine::bf16_to_f32(h));
    }
    write_plain(path, bytes);
    const LlmcCheckpoint c = engine::io::read_llmc_checkpoint(path);
    std::vector<float> got;
    for (const auto& t : c.tensors) got.insert(got.end(), t.begin(), t.end());
    QCOMPARE(got, expected);
    QCOMPARE(c.tensors[0].size(), size_t(8));  // wte is (Vp, C) = (4, 2)
    QCOMPARE(got[1], -2.75f);
  }

  void rejects_corrupt_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<QString>("expected");
    const uint64_t fp32 = 4 * total_of(k_tiny);
    QTest::newRow("empty file") << std::string() << "file is 0 bytes, smaller than the 1024-byte llm.c header";
    QTest::newRow("100 bytes") << raw_file(20240326, 3, k_tiny, 0).substr(0, 100) << "file is 100 bytes";
    QTest::newRow("1023 bytes") << raw_file(20240326, 3, k_tiny, 0).substr(0, 1023) << "file is 1023 bytes";
    QTest::newRow("magic 0") << raw_file(0, 3, k_tiny, fp32) << "header[0] magic = 0 (byte 0), expected 20240326";
    QTest::newRow("magic off by one") << raw_file(20240327, 3, k_tiny, fp32) << "not an llm.c GPT-2 checkpoint";
    QTest::newRow("magic byte-swapped") << raw_file(0x26d63401, 3, k_tiny, fp32) << "header[0] magic";
    for (int64_t v : {int64_t(0), int64_t(1), int64_t(2), int64_t(4), int64_t(6), int64_t(-1), int64_t(0x03000000)})
      QTest::newRow(qPrintable(QString("version %1").arg(v)))
          << raw_file(20240326, v, k_tiny, fp32) << QString("header[1] version = %1 (byte 4) is not supported").arg(v);

    const char* names[] = {"max_seq_len", "vocab_size", "num_layers", "num_heads", "channels", "padded_vocab_size"};
    const int index[] = {2, 3, 4, 5, 6, 7};
    for (int f = 0; f < 6; ++f) {
      for (int64_t bad : {int64_t(0), int64_t(-1), int64_t(INT32_MIN), int64_t(INT32_MAX), int64_t((1 << 20) + 1)}) {
        Dims d = k_tiny;
        int64_t* fields[] = {&d.maxT, &d.V, &d.L, &d.NH, &d.C, &d.Vp};
        *fields[f] = bad;
        QTest::newRow(qPrintable(QString("%1 = %2").arg(names[f]).arg(bad)))
            << raw_file(20240326, 3, d, fp32)
            << QString("header[%1] %2 = %3 (byte %4) must be in [1, 1048576]")
                   .arg(index[f])
                   .arg(names[f])
                   .arg(bad)
                   .arg(index[f] * 4);
      }
    }
    QTest::newRow("channels not divisible by heads")
        << raw_file(20240326, 3, Dims{2, 3, 1, 4, 6, 4}, fp32) << "channels = 6 is not divisible by num_heads = 4";
    QTest::newRow("more heads than channels")
        << raw_file(20240326, 3, Dims{2, 3, 1, 8, 4, 4}, fp32) << "not divisible by num_heads = 8";
    QTest::newRow("padded vocab below vocab") << raw_file(20240326, 3, Dims{2, 5, 1, 1, 2, 4}, fp32)
                                              << "padded_vocab_size = 4 is smaller than vocab_size = 5";
    QTest::newRow("sizes overflow 64 bits")
        << raw_file(20240326, 3, Dims{1, 1, 1 << 20, 1, 1 << 20, 1}, fp32) << "integer overflow";
    QTest::newRow("bf16 sizes overflow 64 bits")
        << raw_file(20240326, 5, Dims{1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20}, 0) << "integer overflow";
    QTest::newRow("GPT-2 124M header, tiny file")
        << raw_file(20240326, 3, Dims{1024, 50257, 12, 12, 768, 50304}, fp32)
        << "bytes but its header implies 497904640 (124475904 parameters, fp32): truncated";
    QTest::newRow("one byte short")
        << raw_file(20240326, 3, k_tiny, fp32 - 1)
        << QString("file is %1 bytes but its header implies %2").arg(1024 + fp32 - 1).arg(1024 + fp32);
    QTest::newRow("one float short") << raw_file(20240326, 3, k_tiny, fp32 - 4) << "truncated";
    QTest::newRow("header only") << raw_file(20240326, 3, k_tiny, 0) << "truncated";
    QTest::newRow("one trailing byte") << raw_file(20240326, 3, k_tiny, fp32 + 1)
                                       << "trailing bytes after the last tensor";
    QTest::newRow("bf16 header, fp32 payload")
        << raw_file(20240326, 5, k_tiny, fp32) << "(90 parameters, bf16): trailing bytes";
    QTest::newRow("fp32 header, bf16 payload")
        << raw_file(20240326, 3, k_tiny, fp32 / 2) << "(90 parameters, fp32): truncated";
  }
  void rejects_corrupt() {
    QFETCH(std::string, bytes);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("bad.bin").toStdString();
    write_plain(path, bytes);
    const QString msg = error_of([&] { engine::io::read_llmc_checkpoint(path); });
    QVERIFY2(!msg.isEmpty(), "accepted a corrupt checkpoint");
    QVERIFY2(msg.startsWith(QString::fromStdString(path) + ": "), qPrintable(msg));
    QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
  }

  void every_truncation_fails() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string good_path = dir.filePath("good.bin").toStdString();
    engine::io::write_llmc_checkpoint(good_path, make_ckpt(k_tiny));
    const std::string good = read_file(good_path);
    QCOMPARE(uint64_t(good.size()), 1024 + 4 * total_of(k_tiny));
    const std::string path = dir.filePath("cut.bin").toStdString();
    for (size_t len = 0; len < good.size(); ++len) {
      write_plain(path, good.substr(0, len));
      const QString msg = error_of([&] { engine::io::read_llmc_checkpoint(path); });
      QVERIFY2(!msg.isEmpty() && !msg.startsWith("<non-engine"), qPrintable(QString("len %1: %2").arg(len).arg(msg)));
    }
  }

  void random_header_values_are_clean() {
    // Random values in the 8 header ints (biased to edge values) never crash or over-allocate:
    // the size check against the (small) file comes before any allocation.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("fuzz.bin").toStdString();
    std::mt19937 rng(7);
    const int64_t edges[] = {0, 1, 2, 3, 4, 5, -1, INT32_MAX, INT32_MIN, 1 << 20, (1 << 20) + 1, 20240326, 768, 50257};
    int accepted = 0;
    for (int iter = 0; iter < 3000; ++iter) {
      Dims d = k_tiny;
      int64_t magic = 20240326, version = 3;
      int64_t* fields[] = {&magic, &version, &d.maxT, &d.V, &d.L, &d.NH, &d.C, &d.Vp};
      const int changes = 1 + int(rng() % 3);
      for (int c = 0; c < changes; ++c) {
        int64_t& f = *fields[rng() % 8];
        f = (rng() % 2) ? edges[rng() % std::size(edges)] : int64_t(int32_t(rng()));
      }
      write_plain(path, raw_file(magic, version, d, 4 * total_of(k_tiny)));
      try {
        engine::io::read_llmc_checkpoint(path);
        ++accepted;
      } catch (const engine::Error&) {
      }
    }
    qInfo("random headers: %d of 3000 accepted", accepted);
  }

  void writer_validates_and_is_atomic() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("gpt2.bin").toStdString();
    engine::io::write_llmc_checkpoint(path, make_ckpt(k_tiny));
    const std::string before = read_file(path);

    LlmcCheckpoint wrong = make_ckpt(k_tiny);
    wrong.tensors[4].pop_back();
    QCOMPARE(error_of([&] { engine::io::write_llmc_checkpoint(path, wrong); }),
             QString::fromStdString(path) + ": tensor 4 (qkvw) has 11 values, the shape needs 12");
    LlmcCheckpoint bad_dims = make_ckpt(k_tiny);
    bad_dims.num_heads = 0;
    QVERIFY(error_of([&] { engine::io::write_llmc_checkpoint(path, bad_dims); }).contains("num_heads = 0"));
    bad_dims.num_heads = 3;
    QVERIFY(error_of([&] { engine::io::write_llmc_checkpoint(path, bad_dims); }).contains("not divisible"));
    QCOMPARE(read_file(path), before);  // refused writes leave the old file alone
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"gpt2.bin"});

    const std::string missing = dir.filePath("none.bin").toStdString();
    QCOMPARE(error_of([&] { engine::io::read_llmc_checkpoint(missing); }),
             QString::fromStdString(missing) + ": cannot open: No such file or directory");
  }
};

QTEST_APPLESS_MAIN(TestLlmcCheckpoint)
#include "test_llmc_checkpoint.moc"
