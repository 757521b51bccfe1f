// A stored inspection: the compact binary form an Inspection is saved in (with a chat message in
// SQLite, or as a file) so it reopens instantly and without the model.
//
// Layout, little-endian, version 1:
//   "WBINSPEC"  u32 version  u32 L  u32 NH  u32 T  u32 K  u32 lens_rows  u32 flags (bit 0: attention)
//   i32 ids[T]
//   attention, when flagged: for each layer, head and query q, keys 0..q only (the rest is 0 by
//     causality) as u16 fixed point round(p * 65535): |error| <= 7.7e-6, so the lower triangle halves
//     and u16 halves again (GPT-2 124M at T=512: 38 MB instead of 151 MB)
//   i32 lens_ids[lens_rows*T*K]  f32 lens_probs[lens_rows*T*K]  f32 token_logprob[T]
//   u32 n_pieces, then per piece: i32 id, u32 byte length, bytes (ids strictly increasing)
//   u32 CRC-32 (IEEE) of every byte before it
// Reading validates before trusting: magic, version, every count and product overflow-checked and
// against the bytes that remain, no trailing bytes, the checksum, lens_rows in {1, L+1}, probabilities
// in [0, 1]. Failure is an engine::Error naming `what` and the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/inspect/inspect.h"

namespace engine {

constexpr uint32_t kInspectionSnapshotVersion = 1;

std::string serialize_inspection(const Inspection& in);
Inspection deserialize_inspection(std::string_view bytes, const std::string& what = "inspection snapshot");

}  // namespace engine
