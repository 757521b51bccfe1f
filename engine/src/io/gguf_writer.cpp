// GGUF writer (version 3): header + metadata + tensor infos, padding, then each tensor's data
// padded to the alignment, exactly the layout the reader requires (tensors in order, each at the
// aligned end of the previous one, nothing after the last tensor's padding).
//
// Invariant: encode/write refuse anything the reader would refuse (key and name rules, duplicate
// keys or names, dims, types, partial blocks, alignment, nested arrays, inconsistent GgufValue
// payloads), so every file written here reads back. write_gguf streams tensor data from the
// caller's buffers through write_file_atomic, so a crash never leaves a half-written file.
#include <set>

#include "engine/checked.h"
#include "engine/error.h"
#include "io/gguf_format.h"

namespace engine::io {

using namespace gguf_detail;

namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_string(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

void put_value(std::string& out, const GgufValue& v, const std::string& ctx) {
  const GgufType t = v.type();
  if (!is_known_value_type(static_cast<uint32_t>(t))) throw Error(ctx + ": unknown value type");
  put_u32(out, static_cast<uint32_t>(t));
  auto check_string = [&](const std::string& s) {
    if (s.size() > k_max_string_bytes)
      throw Error(ctx + ": string of " + std::to_string(s.size()) + " bytes exceeds the " +
                  std::to_string(k_max_string_bytes) + "-byte limit");
  };
  auto check_bools = [&](const std::vector<uint8_t>& raw) {
    for (uint8_t b : raw)
      if (b > 1) throw Error(ctx + ": bool byte " + std::to_string(b) + " is not 0 or 1");
  };
  if (t == GgufType::STRING) {
    if (v.strings().size() != 1) throw Error(ctx + ": malformed string value");
    check_string(v.strings()[0]);
    put_string(out, v.strings()[0]);
    return;
  }
  if (t != GgufType::ARRAY) {
    if (v.raw().size() != value_type_size(t)) throw Error(ctx + ": malformed scalar value");
    if (t == GgufType::BOOL) check_bools(v.raw());
    out.append(reinterpret_cast<const char*>(v.raw().data()), v.raw().size());
    return;
  }
  const GgufType e = v.elem_type();
  if (e == GgufType::ARRAY) throw Error(ctx + ": nested arrays are not supported");
  if (!is_known_value_type(static_cast<uint32_t>(e))) throw Error(ctx + ": unknown array element type");
  put_u32(out, static_cast<uint32_t>(e));
  put_u64(out, v.array_size());
  if (e == GgufType::STRING) {
    if (v.strings().size() != v.array_size()) throw Error(ctx + ": malformed string array");
    for (const std::string& s : v.strings()) {
      check_string(s);
      put_string(out, s);
    }
    return;
  }
  if (v.raw().size() != checked_mul(v.array_size(), value_type_size(e), ctx.c_str()))
    throw Error(ctx + ": malformed array value");
  if (e == GgufType::BOOL) check_bools(v.raw());
  out.append(reinterpret_cast<const char*>(v.raw().data()), v.raw().size());
}

struct Encoded {
  std::string header;                  // everything before the first tensor's data, padded
  std::vector<uint64_t> tensor_bytes;  // per tensor
  std::vector<uint64_t> tensor_pad;    // zero bytes after each tensor
};

Encoded encode_header(const std::string& label, const GgufMetadata& metadata,
                      const std::vector<GgufTensorToWrite>& tensors, uint32_t alignment) {
  if (auto problem = alignment_problem(alignment)) throw Error(label + ": alignment " + *problem);
  Encoded enc;
  std::string& h = enc.header;
  put_u32(h, k_magic);
  put_u32(h, 3);
  put_u64(h, tensors.size());

  bool has_alignment = false;
  std::set<std::string> keys;
  for (const auto& [key, value] : metadata) {
    if (auto problem = key_problem(key)) throw Error(label + ": metadata key " + printable(key) + " " + *problem);
    if (!keys.insert(key).second) throw Error(label + ": duplicate metadata key " + printable(key));
    if (key == "general.alignment") {
      if (value.type() != GgufType::UINT32)
        throw Error(label + ": metadata 'general.alignment' must be UINT32, given " + value.type_text());
      if (value.scalar<uint32_t>("general.alignment") != alignment)
        throw Error(label +
                    ": metadata 'general.alignment' = " + std::to_string(value.scalar<uint32_t>("general.alignment")) +
                    " disagrees with the requested alignment " + std::to_string(alignment));
      has_alignment = true;
    }
  }
  const bool add_alignment = !has_alignment && alignment != k_default_alignment;
  put_u64(h, metadata.size() + (add_alignment ? 1 : 0));
  for (const auto& [key, value] : metadata) {
    put_string(h, key);
    put_value(h, value, label + ": metadata " + printable(key));
  }
  if (add_alignment) {
    put_string(h, "general.alignment");
    put_value(h, GgufValue(alignment), label + ": metadata 'general.alignment'");
  }

  std::set<std::string> names;
  uint64_t offset = 0;
  for (const GgufTensorToWrite& t : tensors) {
    const std::string ctx = label + ": tensor " + printable(t.name);
    if (auto problem = tensor_name_problem(t.name))
      throw Error(label + ": tensor name " + printable(t.name) + " " + *problem);
    if (!names.insert(t.name).second) throw Error(label + ": duplicate tensor name " + printable(t.name));
    if (t.shape.empty() || t.shape.size() > k_max_dims)
      throw Error(ctx + ": " + std::to_string(t.shape.size()) + " dims, must be 1.." + std::to_string(k_max_dims));
    uint64_t numel = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] == 0 || t.shape[d] > k_max_dim)
        throw Error(ctx + ": ne[" + std::to_string(d) + "] = " + std::to_string(t.shape[d]) + " out of range 1..2^62");
      numel = checked_mul(numel, t.shape[d], (ctx + " element count").c_str());
    }
    if (numel > uint64_t(INT64_MAX)) throw Error(ctx + ": element count overflows int64");
    const GgmlTypeInfo* info = supported_ggml_type(static_cast<uint32_t>(t.type));
    if (info == nullptr) throw Error(ctx + ": " + unsupported_type_text(static_cast<uint32_t>(t.type)));
    if (t.shape[0] % info->block_elems != 0)
      throw Error(ctx + ": ne[0] = " + std::to_string(t.shape[0]) + " is not a multiple of the " + info->name +
                  " block size " + std::to_string(info->block_elems));
    const uint64_t nbytes = checked_mul(numel / info->block_elems, info->block_bytes, (ctx + " byte size").c_str());
    if (t.data == nullptr) throw Error(ctx + ": data is null");

    put_string(h, t.name);
    put_u32(h, static_cast<uint32_t>(t.shape.size()));
    for (uint64_t ne : t.shape) put_u64(h, ne);
    put_u32(h, static_cast<uint32_t>(t.type));
    put_u64(h, offset);
    const uint64_t end = checked_add(offset, nbytes, (ctx + " data offset").c_str());
    const uint64_t padded = checked_align_up(end, alignment, (ctx + " data offset").c_str());
    enc.tensor_bytes.push_back(nbytes);
    enc.tensor_pad.push_back(padded - end);
    offset = padded;
  }
  h.append((alignment - h.size() % alignment) % alignment, '\0');
  return enc;
}

}  // namespace

std::vector<uint8_t> encode_gguf(const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors,
                                 uint32_t alignment) {
  const Encoded enc = encode_header("encode_gguf", metadata, tensors, alignment);
  uint64_t total = enc.header.size();
  for (size_t i = 0; i < tensors.size(); ++i)
    total =
        checked_add(total, checked_add(enc.tensor_bytes[i], enc.tensor_pad[i], "encode_gguf size"), "encode_gguf size");
  std::vector<uint8_t> out;
  out.reserve(checked_cast<size_t>(total, "encode_gguf size"));
  out.insert(out.end(), enc.header.begin(), enc.header.end());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto* p = static_cast<const uint8_t*>(tensors[i].data);
    out.insert(out.end(), p, p + enc.tensor_bytes[i]);
    out.insert(out.end(), enc.tensor_pad[i], uint8_t(0));
  }
  return out;
}

void write_gguf(const std::string& path, const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors,
                uint32_t alignment) {
  const Encoded enc = encode_header(path, metadata, tensors, alignment);
  static const uint8_t zeros[k_max_alignment] = {};  // padding source; never more than alignment-1 bytes
  std::vector<WritePart> parts;
  parts.reserve(1 + 2 * tensors.size());
  parts.push_back(WritePart{enc.header.data(), enc.header.size()});
  for (size_t i = 0; i < tensors.size(); ++i) {
    parts.push_back(WritePart{tensors[i].data, enc.tensor_bytes[i]});
    if (enc.tensor_pad[i] > 0) parts.push_back(WritePart{zeros, enc.tensor_pad[i]});
  }
  write_file_atomic(path, parts);
}

}  // namespace engine::io
