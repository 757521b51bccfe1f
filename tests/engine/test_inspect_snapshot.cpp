// engine/inspect/snapshot: an inspection survives the round trip through its stored form (attention
// to within the documented u16 step, everything else exactly), and corrupt or truncated blobs are
// refused with an engine::Error, never a crash.
#include <QtTest>

#include <cstring>
#include <random>

#include "engine/error.h"
#include "engine/inspect/inspect.h"
#include "engine/inspect/snapshot.h"
#include "engine/model_loader.h"
#include "support/error_of.h"

using namespace engine;

namespace {

const std::string kData = std::string(WB_TEST_DATA_DIR);

// Re-stamps the trailing CRC so a deliberate edit reaches the field checks behind the checksum.
// (Bitwise CRC-32, written independently of the engine's table-driven one.)
void restamp(std::string& blob) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i + 4 < blob.size(); ++i) {
    c ^= static_cast<uint8_t>(blob[i]);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  c ^= 0xFFFFFFFFu;
  for (int i = 0; i < 4; ++i) blob[blob.size() - 4 + i] = static_cast<char>((c >> (8 * i)) & 0xFF);
}

void put_u32_at(std::string& blob, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) blob[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

class TestInspectSnapshot : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> m_be = make_cpu_backend(2);
  std::unique_ptr<Model> m_model = load_model(kData + "/tiny-llama");
  Inspection m_in = inspect_prompt(*m_model, *m_be, std::vector<int32_t>{1, 50, 100, 150, 200, 250, 300, 7, 7});

 private slots:
  void round_trip() {
    const std::string blob = serialize_inspection(m_in);
    // The lower triangle only, two bytes per probability.
    const size_t att_bytes = size_t(m_in.n_layer) * m_in.n_head * (m_in.T * (m_in.T + 1) / 2) * 2;
    size_t piece_bytes = 0;
    for (const auto& p : m_in.pieces) piece_bytes += 8 + p.second.size();
    QCOMPARE(blob.size(),
             36 + 4 * size_t(m_in.T) + att_bytes + 8 * m_in.lens_ids.size() + 4 * size_t(m_in.T) + 4 + piece_bytes + 4);
    QVERIFY(att_bytes * 2 < m_in.attention.size() * 4);  // under half the bytes of the f32 matrices
    const Inspection out = deserialize_inspection(blob);
    QCOMPARE(out.n_layer, m_in.n_layer);
    QCOMPARE(out.n_head, m_in.n_head);
    QCOMPARE(out.T, m_in.T);
    QCOMPARE(out.top_k, m_in.top_k);
    QCOMPARE(out.lens_rows, m_in.lens_rows);
    QCOMPARE(out.ids, m_in.ids);
    QCOMPARE(out.lens_ids, m_in.lens_ids);
    QCOMPARE(out.lens_probs, m_in.lens_probs);
    QCOMPARE(out.token_logprob, m_in.token_logprob);
    QCOMPARE(out.pieces, m_in.pieces);
    QCOMPARE(out.attention.size(), m_in.attention.size());
    for (size_t i = 0; i < out.attention.size(); ++i) {
      QVERIFY(std::abs(out.attention[i] - m_in.attention[i]) <= 0.5f / 65535.0f + 1e-7f);
      if (m_in.attention[i] == 0.0f) QCOMPARE(out.attention[i], 0.0f);
    }
    // Without attention and lens, too.
    InspectOptions o;
    o.attention = false;
    o.lens = false;
    const Inspection small = inspect_prompt(*m_model, *m_be, std::vector<int32_t>{4, 5}, o);
    const Inspection back = deserialize_inspection(serialize_inspection(small));
    QVERIFY(back.attention.empty());
    QCOMPARE(back.lens_rows, 1);
    QCOMPARE(back.lens_probs, small.lens_probs);
  }

  void every_truncation_is_refused() {
    const std::string blob = serialize_inspection(m_in);
    for (size_t n = 0; n < blob.size(); n += (n < 64 ? 1 : 97)) {
      const QString e = error_of([&] { deserialize_inspection(std::string_view(blob).substr(0, n), "snap"); });
      QVERIFY2(e.startsWith("snap: "), qPrintable(QString("length %1: %2").arg(n).arg(e)));
    }
    QVERIFY(error_of([&] { deserialize_inspection(blob + "x"); }).contains("checksum"));
  }

  void flipped_bits_are_refused() {
    const std::string blob = serialize_inspection(m_in);
    std::mt19937 rng(11);
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = blob;
      const size_t at = std::uniform_int_distribution<size_t>(0, bad.size() - 1)(rng);
      bad[at] = static_cast<char>(bad[at] ^ (1 << (trial % 8)));
      const QString e = error_of([&] { deserialize_inspection(bad); });
      QVERIFY2(!e.isEmpty() && !e.startsWith("<non-engine"), qPrintable(QString("byte %1: '%2'").arg(at).arg(e)));
    }
  }

  void bad_fields_behind_a_valid_checksum_are_named() {
    const std::string blob = serialize_inspection(m_in);
    struct Case {
      size_t offset;
      uint32_t value;
      const char* error;
    };
    const Case cases[] = {
        {8, 2, "version 2 is not supported"},
        {12, 0, "out of range"},            // L = 0
        {20, 0xFFFFFFFFu, "out of range"},  // T huge
        {20, 100000, "only"},               // T large: the ids no longer fit in the bytes
        {28, 2, "neither 1 nor L+1"},       // lens_rows
        {32, 6, "unknown flags"},
    };
    for (const Case& c : cases) {
      std::string bad = blob;
      put_u32_at(bad, c.offset, c.value);
      restamp(bad);
      const QString e = error_of([&] { deserialize_inspection(bad); });
      QVERIFY2(e.contains(c.error), qPrintable(QString("offset %1: '%2'").arg(c.offset).arg(e)));
    }
    // A probability outside [0, 1] in the lens.
    const size_t lens_probs_at = 36 + 4 * size_t(m_in.T) +
                                 size_t(m_in.n_layer) * m_in.n_head * (m_in.T * (m_in.T + 1) / 2) * 2 +
                                 4 * m_in.lens_ids.size();
    std::string bad = blob;
    const float two = 2.0f;
    uint32_t v;
    std::memcpy(&v, &two, 4);
    put_u32_at(bad, lens_probs_at, v);
    restamp(bad);
    QVERIFY(error_of([&] { deserialize_inspection(bad); }).contains("outside [0, 1]"));
    std::string magic = blob;
    magic[0] = 'X';
    QVERIFY(error_of([&] { deserialize_inspection(magic); }).contains("bad magic"));
  }
};

QTEST_APPLESS_MAIN(TestInspectSnapshot)
#include "test_inspect_snapshot.moc"
