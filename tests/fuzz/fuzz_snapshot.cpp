// libFuzzer target: stored inspections, `.wbinspect` (engine/src/inspect/snapshot.cpp).
// Input: one mode byte, then the snapshot. With mode bit 0 set the last 4 bytes are first replaced by
// the CRC-32 of the bytes before them, so mutations get past the checksum and reach the field checks
// behind it (a random mutation almost never carries a valid CRC).
// deserialize_inspection must return an Inspection or throw engine::Error. An accepted snapshot must
// be self-consistent (every array the size its counts say, every accessor in bounds) and serialize
// back to the very same bytes: the format has one encoding per inspection, so anything else means the
// reader accepted bytes it cannot have written.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/error.h"
#include "engine/inspect/snapshot.h"

namespace {

uint32_t crc32_ieee(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

volatile float g_sink = 0;

void check(const engine::Inspection& in) {
  const size_t T = static_cast<size_t>(in.T), K = static_cast<size_t>(in.top_k);
  if (in.ids.size() != T || in.token_logprob.size() != T) __builtin_trap();
  if (in.lens_ids.size() != size_t(in.lens_rows) * T * K || in.lens_probs.size() != in.lens_ids.size()) __builtin_trap();
  if (!in.attention.empty()) {
    if (in.attention.size() != size_t(in.n_layer) * in.n_head * T * T) __builtin_trap();
    for (int l = 0; l < in.n_layer; ++l)
      for (int h = 0; h < in.n_head; ++h) g_sink = g_sink + in.head_matrix(l, h).back();
  }
  for (int r = 0; r < in.lens_rows; ++r)
    for (int t = 0; t < in.T; ++t)
      for (int j = 0; j < in.top_k; ++j) g_sink = g_sink + in.lens_prob(r, t, j) + float(in.lens_id(r, t, j));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) && bytes.size() >= 4) {
    const uint32_t crc = crc32_ieee(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size() - 4);
    std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);  // little-endian, as the format stores it
  }
  try {
    const engine::Inspection in = engine::deserialize_inspection(bytes, "fuzz.wbinspect");
    check(in);
    if (engine::serialize_inspection(in) != bytes) __builtin_trap();
  } catch (const engine::Error&) {
  }
  return 0;
}
