// serialize_inspection / deserialize_inspection (format in engine/inspect/snapshot.h).
#include "engine/inspect/snapshot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "engine/checked.h"
#include "engine/error.h"

namespace engine {

namespace {

constexpr char kMagic[8] = {'W', 'B', 'I', 'N', 'S', 'P', 'E', 'C'};
constexpr uint32_t kFlagAttention = 1;

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

uint32_t crc32(std::string_view bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (const char ch : bytes) c = kCrcTable[(c ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_f32(std::string& out, float f) {
  uint32_t v;
  std::memcpy(&v, &f, 4);
  put_u32(out, v);
}

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& what) : m_bytes(bytes), m_what(what) {}

  const char* take(uint64_t n, const char* field) {
    if (n > m_bytes.size() - m_pos)
      throw Error(m_what + ": " + field + ": needs " + std::to_string(n) + " bytes at offset " + std::to_string(m_pos) +
                  ", only " + std::to_string(m_bytes.size() - m_pos) + " remain");
    const char* p = m_bytes.data() + m_pos;
    m_pos += n;
    return p;
  }
  uint32_t u32(const char* field) {
    const auto* p = reinterpret_cast<const uint8_t*>(take(4, field));
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  float f32(const char* field) {
    const uint32_t v = u32(field);
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }
  // Checks that `count` items of `size` bytes can still be read (before anything is allocated).
  uint64_t expect(uint64_t count, uint64_t size, const char* field) {
    const uint64_t n = checked_mul(count, size, (m_what + ": " + field).c_str());
    if (n > m_bytes.size() - m_pos)
      throw Error(m_what + ": " + field + ": " + std::to_string(count) + " entries need " + std::to_string(n) +
                  " bytes at offset " + std::to_string(m_pos) + ", only " + std::to_string(m_bytes.size() - m_pos) +
                  " remain");
    return count;
  }
  uint64_t pos() const { return m_pos; }
  uint64_t remaining() const { return m_bytes.size() - m_pos; }
  [[noreturn]] void fail(const std::string& msg) const { throw Error(m_what + ": " + msg); }

 private:
  std::string_view m_bytes;
  const std::string& m_what;
  uint64_t m_pos = 0;
};

}  // namespace

std::string serialize_inspection(const Inspection& in) {
  const bool has_att = !in.attention.empty();
  std::string out(kMagic, sizeof kMagic);
  for (uint32_t v : {kInspectionSnapshotVersion, uint32_t(in.n_layer), uint32_t(in.n_head), uint32_t(in.T),
                     uint32_t(in.top_k), uint32_t(in.lens_rows), has_att ? kFlagAttention : 0u})
    put_u32(out, v);
  for (int32_t id : in.ids) put_u32(out, static_cast<uint32_t>(id));
  if (has_att) {
    for (int l = 0; l < in.n_layer; ++l)
      for (int h = 0; h < in.n_head; ++h)
        for (int q = 0; q < in.T; ++q)
          for (int k = 0; k <= q; ++k) {
            const float p = std::clamp(in.att(l, h, q, k), 0.0f, 1.0f);
            const auto v = static_cast<uint16_t>(std::lround(p * 65535.0f));
            out.push_back(static_cast<char>(v & 0xFF));
            out.push_back(static_cast<char>(v >> 8));
          }
  }
  for (int32_t id : in.lens_ids) put_u32(out, static_cast<uint32_t>(id));
  for (float p : in.lens_probs) put_f32(out, p);
  for (float p : in.token_logprob) put_f32(out, p);
  put_u32(out, static_cast<uint32_t>(in.pieces.size()));
  for (const auto& [id, text] : in.pieces) {
    put_u32(out, static_cast<uint32_t>(id));
    put_u32(out, static_cast<uint32_t>(text.size()));
    out += text;
  }
  put_u32(out, crc32(out));
  return out;
}

Inspection deserialize_inspection(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  if (bytes.size() < sizeof kMagic + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    r.fail("not an inspection snapshot (bad magic)");
  // The checksum first: a flipped bit anywhere is reported as such, not as whatever field it hit.
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  Reader tail(bytes.substr(bytes.size() - 4), what);
  if (tail.u32("crc32") != crc32(body)) r.fail("checksum mismatch (the snapshot is corrupt)");
  Reader b(body, what);
  b.take(sizeof kMagic, "magic");
  const uint32_t version = b.u32("version");
  if (version != kInspectionSnapshotVersion)
    b.fail("version " + std::to_string(version) + " is not supported (this build reads version " +
           std::to_string(kInspectionSnapshotVersion) + ")");
  Inspection in;
  const uint32_t L = b.u32("n_layer"), NH = b.u32("n_head"), T = b.u32("T"), K = b.u32("top_k"),
                 rows = b.u32("lens_rows"), flags = b.u32("flags");
  constexpr uint32_t kMax = 1u << 20;  // far beyond any model; keeps every product below 2^63
  if (L == 0 || L > kMax || NH == 0 || NH > kMax || T == 0 || T > kMax || K == 0 || K > kMax)
    b.fail("shape L=" + std::to_string(L) + " NH=" + std::to_string(NH) + " T=" + std::to_string(T) +
           " K=" + std::to_string(K) + " out of range");
  if (rows != 1 && rows != L + 1) b.fail("lens_rows " + std::to_string(rows) + " is neither 1 nor L+1");
  if (flags & ~kFlagAttention) b.fail("unknown flags " + std::to_string(flags));
  in.n_layer = int(L);
  in.n_head = int(NH);
  in.T = int(T);
  in.top_k = int(K);
  in.lens_rows = int(rows);

  in.ids.resize(b.expect(T, 4, "ids"));
  for (int32_t& id : in.ids) id = static_cast<int32_t>(b.u32("ids"));

  if (flags & kFlagAttention) {
    const uint64_t per_head = uint64_t(T) * (T + 1) / 2;
    const uint64_t heads = checked_mul(L, NH, "attention");
    b.expect(checked_mul(heads, per_head, (what + ": attention").c_str()), 2, "attention");
    in.attention.assign(checked_mul(heads, uint64_t(T) * T, "attention"), 0.0f);
    const auto* p = reinterpret_cast<const uint8_t*>(b.take(heads * per_head * 2, "attention"));
    float* dst = in.attention.data();
    for (uint64_t hd = 0; hd < heads; ++hd)
      for (uint32_t q = 0; q < T; ++q) {
        for (uint32_t k = 0; k <= q; ++k, p += 2) dst[uint64_t(q) * T + k] = float(p[0] | p[1] << 8) / 65535.0f;
        if (q == T - 1) dst += uint64_t(T) * T;
      }
  }

  const uint64_t lens_n = checked_mul(checked_mul(rows, T, "lens"), K, "lens");
  in.lens_ids.resize(b.expect(lens_n, 4, "lens_ids"));
  for (int32_t& id : in.lens_ids) {
    id = static_cast<int32_t>(b.u32("lens_ids"));
    if (id < 0) b.fail("lens_ids: negative token id " + std::to_string(id));
  }
  in.lens_probs.resize(b.expect(lens_n, 4, "lens_probs"));
  for (float& p : in.lens_probs) {
    p = b.f32("lens_probs");
    if (!(p >= 0.0f && p <= 1.0f)) b.fail("lens_probs: probability " + std::to_string(p) + " outside [0, 1]");
  }
  in.token_logprob.resize(b.expect(T, 4, "token_logprob"));
  for (float& p : in.token_logprob) {
    p = b.f32("token_logprob");
    if (!(p <= 0.0f)) b.fail("token_logprob: " + std::to_string(p) + " is not a log-probability");
  }
  const uint32_t n_pieces = b.u32("n_pieces");
  b.expect(n_pieces, 8, "pieces");
  in.pieces.reserve(n_pieces);
  for (uint32_t i = 0; i < n_pieces; ++i) {
    const auto id = static_cast<int32_t>(b.u32("piece id"));
    if (id < 0 || (!in.pieces.empty() && id <= in.pieces.back().first))
      b.fail("pieces: ids not strictly increasing at entry " + std::to_string(i));
    const uint32_t len = b.u32("piece length");
    in.pieces.emplace_back(id, std::string(b.take(len, "piece bytes"), len));
  }
  if (b.remaining() != 0) b.fail(std::to_string(b.remaining()) + " unexpected bytes after the pieces");
  return in;
}

}  // namespace engine
