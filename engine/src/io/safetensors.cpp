// safetensors reader (validate everything before trusting anything) and atomic writer.
//
// Reader order of checks, each one guarding the next (research/reliability.md §1.5, §1.7 19-22):
//   file >= 8 bytes -> 8 <= N <= 100 MB -> 8 + N <= file size -> header starts with '{' ->
//   UTF-8 + JSON object, no duplicate keys, shallow nesting (json_util) -> __metadata__ string map ->
//   per tensor: non-empty name without NUL, exactly {dtype, shape, data_offsets}, known dtype,
//   non-negative integer dims, overflow-checked element and byte counts, begin <= end <= data size,
//   end - begin == bytes -> sorted by begin, contiguous from 0 with no gap or overlap, last end ==
//   data size exactly (no appended polyglot payload).
// Only after all of that is a data pointer formed, so every StTensor::data lies inside the file.
// Byte offsets in messages are file offsets (the data section starts at 8 + N).
#include "engine/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "io/json_util.h"

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; add byte swaps");

namespace engine::io {

namespace {

constexpr uint64_t k_max_header_bytes = 100'000'000;  // the reference reader's MAX_HEADER_SIZE
constexpr uint64_t k_min_header_bytes = 8;            // writers pad headers to 8 bytes; "{}" padded = 8
constexpr int k_header_max_depth = 8;                 // real headers nest 3 deep: {name: {shape: [..]}}

struct DTypeInfo {
  StDType type;
  const char* name;
  uint64_t size;
};

constexpr DTypeInfo k_dtypes[] = {
    {StDType::F64, "F64", 8}, {StDType::F32, "F32", 4},   {StDType::F16, "F16", 2}, {StDType::BF16, "BF16", 2},
    {StDType::I64, "I64", 8}, {StDType::I32, "I32", 4},   {StDType::I16, "I16", 2}, {StDType::I8, "I8", 1},
    {StDType::U8, "U8", 1},   {StDType::BOOL, "BOOL", 1},
};

const DTypeInfo* find_dtype(std::string_view name) {
  for (const DTypeInfo& d : k_dtypes)
    if (name == d.name) return &d;  // case-sensitive, as in the reference
  return nullptr;
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A tensor name fit for an error message: NULs made visible, at most ~80 bytes.
std::string printable_name(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size() && i < 80; ++i) {
    if (name[i] == '\0') out += "\\0";
    else out += name[i];
  }
  if (name.size() > 80) out += "...";
  return "'" + out + "'";
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string range_text(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

uint64_t element_count(const std::vector<uint64_t>& shape, const std::string& what) {
  uint64_t n = 1;  // rank 0 is a scalar: one element
  for (uint64_t d : shape) n = checked_mul(n, d, what.c_str());
  return n;
}

struct ParsedTensor {
  StTensor tensor;
  uint64_t begin = 0, end = 0;
};

ParsedTensor parse_tensor_entry(const std::string& label, const std::string& name, const json& entry,
                                uint64_t data_size, uint64_t data_start) {
  if (name.empty()) throw Error(label + ": a tensor has an empty name");
  if (name.find('\0') != std::string::npos)
    throw Error(label + ": tensor name " + printable_name(name) + " contains a NUL byte");
  const std::string ctx = label + ": tensor " + printable_name(name);
  if (!entry.is_object()) throw Error(ctx + ": entry must be an object, got " + json_describe(entry));
  for (const auto& item : entry.items()) {
    const std::string& k = item.key();
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      throw Error(ctx + ": unexpected field '" + k + "' (allowed: dtype, shape, data_offsets)");
  }

  ParsedTensor p;
  p.tensor.name = name;

  const std::string dtype_str = json_get_string(entry, "dtype", ctx, 64);
  const DTypeInfo* info = find_dtype(dtype_str);
  if (info == nullptr)
    throw Error(ctx + ": unsupported dtype " + json_describe(json(dtype_str)) +
                " (supported: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
  p.tensor.dtype = info->type;

  const json& shape = json_get_array(entry, "shape", ctx);
  p.tensor.shape.reserve(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    p.tensor.shape.push_back(
        json_as_uint(shape[i], ctx, "shape[" + std::to_string(i) + "]", 0, std::numeric_limits<uint64_t>::max()));
  const uint64_t numel =
      element_count(p.tensor.shape, ctx + ": shape " + shape_text(p.tensor.shape) + " element count");
  p.tensor.nbytes =
      checked_mul(numel, info->size,
                  (ctx + ": byte size of " + std::to_string(numel) + " " + info->name + " elements").c_str());

  const json& offsets = json_get_array(entry, "data_offsets", ctx);
  if (offsets.size() != 2)
    throw Error(ctx + ": field 'data_offsets' must be an array of 2 integers, got " + json_describe(offsets));
  p.begin = json_as_uint(offsets[0], ctx, "data_offsets[0]", 0, std::numeric_limits<uint64_t>::max());
  p.end = json_as_uint(offsets[1], ctx, "data_offsets[1]", 0, std::numeric_limits<uint64_t>::max());
  if (p.end < p.begin)
    throw Error(ctx + ": data_offsets [" + std::to_string(p.begin) + ", " + std::to_string(p.end) +
                "] end before begin");
  if (p.end > data_size)
    throw Error(ctx + ": data_offsets " + range_text(p.begin, p.end) + " run past the end of the " +
                std::to_string(data_size) + "-byte data section (file bytes " + std::to_string(data_start) + ".." +
                std::to_string(data_start + data_size) + ")");
  if (p.end - p.begin != p.tensor.nbytes)
    throw Error(ctx + ": data_offsets " + range_text(p.begin, p.end) + " hold " + std::to_string(p.end - p.begin) +
                " bytes but dtype " + info->name + " with shape " + shape_text(p.tensor.shape) + " needs " +
                std::to_string(p.tensor.nbytes));
  return p;
}

}  // namespace

std::string_view st_dtype_name(StDType t) {
  for (const DTypeInfo& d : k_dtypes)
    if (d.type == t) return d.name;
  return "unknown";
}

uint64_t st_dtype_size(StDType t) {
  for (const DTypeInfo& d : k_dtypes)
    if (d.type == t) return d.size;
  throw Error("safetensors: unknown dtype " + std::to_string(static_cast<int>(t)));
}

uint64_t StTensor::numel() const { return element_count(shape, "tensor '" + name + "' element count"); }

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  auto file = MappedFile::open(path);
  auto st = from_memory(file->data(), file->size(), path);
  st->m_file = std::move(file);
  return st;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::from_memory(const uint8_t* bytes, uint64_t size, std::string label) {
  if (bytes == nullptr && size > 0) throw Error(label + ": null buffer");
  if (size < 8)
    throw Error(label + ": file is " + std::to_string(size) + " bytes, too small for the 8-byte header length");
  const uint64_t n = read_u64_le(bytes);
  if (n > k_max_header_bytes)
    throw Error(label + ": header length " + std::to_string(n) + " (bytes 0..8) exceeds the " +
                std::to_string(k_max_header_bytes) + "-byte limit");
  if (n < k_min_header_bytes)
    throw Error(label + ": header length " + std::to_string(n) + " (bytes 0..8) is below the " +
                std::to_string(k_min_header_bytes) + "-byte minimum");
  const uint64_t data_start = checked_add(n, 8, (label + ": header length").c_str());
  if (data_start > size)
    throw Error(label + ": header length " + std::to_string(n) + " (bytes 0..8) runs past the end of the " +
                std::to_string(size) + "-byte file");
  if (bytes[8] != '{') {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", bytes[8]);
    throw Error(label + ": header must begin with '{', byte 8 is " + hex);
  }

  const std::string_view header_text(reinterpret_cast<const char*>(bytes + 8), static_cast<size_t>(n));
  const json header = parse_json_checked(header_text, label + " header", k_header_max_depth, 8);
  if (!header.is_object()) throw Error(label + ": header must be a JSON object, got " + json_describe(header));

  auto st = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  st->m_label = label;
  const uint64_t data_size = size - data_start;

  std::vector<ParsedTensor> parsed;
  parsed.reserve(header.size());
  for (const auto& item : header.items()) {
    const std::string& key = item.key();
    const json& value = item.value();
    if (key == "__metadata__") {
      if (!value.is_object())
        throw Error(label + ": __metadata__ must be an object of strings, got " + json_describe(value));
      for (const auto& m : value.items()) {
        if (!m.value().is_string())
          throw Error(label + ": __metadata__ value of " + printable_name(m.key()) + " must be a string, got " +
                      json_describe(m.value()));
        st->m_metadata.emplace(m.key(), m.value().get<std::string>());
      }
      continue;
    }
    parsed.push_back(parse_tensor_entry(label, key, value, data_size, data_start));
  }

  // Coverage: sorted by [begin, end), every byte of the data section belongs to exactly one tensor.
  // Zero-size tensors sort before a tensor starting at the same offset and take no bytes.
  std::sort(parsed.begin(), parsed.end(), [](const ParsedTensor& a, const ParsedTensor& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.tensor.name < b.tensor.name;
  });
  uint64_t cursor = 0;
  const std::string* previous = nullptr;
  for (const ParsedTensor& p : parsed) {
    if (p.begin > cursor)
      throw Error(label + ": data bytes " + range_text(cursor, p.begin) + " (file bytes " +
                  std::to_string(data_start + cursor) + ".." + std::to_string(data_start + p.begin) +
                  ") belong to no tensor: gap before tensor " + printable_name(p.tensor.name));
    if (p.begin < cursor)
      throw Error(label + ": tensor " + printable_name(p.tensor.name) + ": data_offsets " + range_text(p.begin, p.end) +
                  " overlap tensor " + printable_name(previous ? *previous : std::string()) + " which ends at " +
                  std::to_string(cursor));
    cursor = p.end;
    previous = &p.tensor.name;
  }
  if (cursor != data_size)
    throw Error(label + ": tensors cover " + std::to_string(cursor) + " of the " + std::to_string(data_size) +
                " data bytes: file bytes " + std::to_string(data_start + cursor) + ".." + std::to_string(size) +
                " belong to no tensor (trailing data)");

  st->m_tensors.reserve(parsed.size());
  for (ParsedTensor& p : parsed) {
    p.tensor.data = bytes + data_start + p.begin;
    st->m_tensors.push_back(std::move(p.tensor));
  }
  return st;
}

const StTensor* SafetensorsFile::find(const std::string& name) const {
  for (const StTensor& t : m_tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<float> SafetensorsFile::read_f32(const StTensor& t) const {
  // Accept only a tensor of this file (or an identical copy of one), so data/nbytes can be trusted.
  const StTensor* own =
      (!m_tensors.empty() && &t >= m_tensors.data() && &t < m_tensors.data() + m_tensors.size()) ? &t : find(t.name);
  if (own == nullptr || own->data != t.data || own->nbytes != t.nbytes || own->dtype != t.dtype ||
      own->shape != t.shape)
    throw Error(m_label + ": read_f32: tensor " + printable_name(t.name) + " does not belong to this file");

  const uint64_t numel = own->numel();
  const uint64_t elem = st_dtype_size(own->dtype);
  if (checked_mul(numel, elem, "read_f32 size") != own->nbytes)
    throw Error(m_label + ": tensor " + printable_name(own->name) + ": byte size does not match its shape");

  const std::string ctx = m_label + ": tensor " + printable_name(own->name);
  std::vector<float> out(checked_cast<size_t>(numel, ctx.c_str()));
  const uint8_t* src = own->data;  // may be unaligned: every load goes through memcpy
  switch (own->dtype) {
    case StDType::F32:
      if (numel > 0) std::memcpy(out.data(), src, own->nbytes);
      break;
    case StDType::F16:
      for (uint64_t i = 0; i < numel; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = fp16_to_f32(h);
      }
      break;
    case StDType::BF16:
      for (uint64_t i = 0; i < numel; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = bf16_to_f32(h);
      }
      break;
    case StDType::F64:
      for (uint64_t i = 0; i < numel; ++i) {
        double d;
        std::memcpy(&d, src + 8 * i, 8);
        // Out-of-range double -> float conversion is undefined in C++; saturate to +-inf explicitly.
        if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
          out[i] = d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
        else out[i] = static_cast<float>(d);
      }
      break;
    default:
      throw Error(ctx + ": dtype " + std::string(st_dtype_name(own->dtype)) +
                  " cannot be read as f32 (F32, F16, BF16 or F64 only)");
  }
  return out;
}

void narrow_f32_tensors_to_f16(std::vector<StTensorToWrite>& tensors, std::vector<std::vector<uint16_t>>& storage) {
  storage.reserve(storage.size() + tensors.size());  // pointers into earlier copies stay valid
  for (StTensorToWrite& t : tensors) {
    if (t.dtype != StDType::F32) continue;
    const uint64_t numel = element_count(t.shape, "tensor " + printable_name(t.name) + " element count");
    const float* src = static_cast<const float*>(t.data);
    std::vector<uint16_t> half(numel);
    for (uint64_t i = 0; i < numel; ++i) {
      if (!(std::fabs(src[i]) <= 65504.0f))
        throw Error("tensor " + printable_name(t.name) + " holds " + std::to_string(src[i]) + " at element " +
                    std::to_string(i) + ", which f16 cannot store (largest 65504); save it as f32");
      half[i] = f32_to_fp16(src[i]);
    }
    storage.push_back(std::move(half));
    t.dtype = StDType::F16;
    t.data = storage.back().data();
  }
}

void write_safetensors(const std::string& path, const std::vector<StTensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // Refuse what the reader would refuse, so we never write a file we cannot read back.
  auto check_utf8 = [&](const std::string& s, const std::string& what) {
    if (auto bad = find_invalid_utf8(s))
      throw Error(path + ": " + what + " is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
  };
  json header = json::object();
  if (!metadata.empty()) {
    json meta = json::object();
    for (const auto& [k, v] : metadata) {
      check_utf8(k, "metadata key " + printable_name(k));
      check_utf8(v, "metadata value of " + printable_name(k));
      meta[k] = v;
    }
    header["__metadata__"] = std::move(meta);
  }

  std::vector<WritePart> data_parts;
  uint64_t offset = 0;
  for (const StTensorToWrite& t : tensors) {
    const std::string ctx = path + ": tensor " + printable_name(t.name);
    if (t.name.empty()) throw Error(path + ": cannot write a tensor with an empty name");
    if (t.name.find('\0') != std::string::npos) throw Error(ctx + ": name contains a NUL byte");
    if (t.name == "__metadata__") throw Error(ctx + ": name is reserved");
    check_utf8(t.name, "tensor name " + printable_name(t.name));
    if (header.contains(t.name)) throw Error(ctx + ": duplicate tensor name");
    const uint64_t numel = element_count(t.shape, ctx + " element count");
    const uint64_t nbytes = checked_mul(numel, st_dtype_size(t.dtype), (ctx + " byte size").c_str());
    if (nbytes > 0 && t.data == nullptr) throw Error(ctx + ": data is null");
    const uint64_t end = checked_add(offset, nbytes, (ctx + " data offset").c_str());
    header[t.name] = json{{"dtype", std::string(st_dtype_name(t.dtype))},
                          {"shape", t.shape},
                          {"data_offsets", json::array({offset, end})}};
    if (nbytes > 0) data_parts.push_back(WritePart{t.data, nbytes});
    offset = end;
  }

  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned (8 + N is a multiple of 8).
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > k_max_header_bytes)
    throw Error(path + ": header of " + std::to_string(text.size()) + " bytes exceeds the " +
                std::to_string(k_max_header_bytes) + "-byte limit");
  uint8_t prefix[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i, n >>= 8) prefix[i] = static_cast<uint8_t>(n & 0xff);

  std::vector<WritePart> parts;
  parts.reserve(data_parts.size() + 2);
  parts.push_back(WritePart{prefix, 8});
  parts.push_back(WritePart{text.data(), text.size()});
  parts.insert(parts.end(), data_parts.begin(), data_parts.end());
  write_file_atomic(path, parts);
}

void SafetensorsFile::release(const StTensor& t) const {
  if (m_file && t.data >= m_file->data() && t.data + t.nbytes <= m_file->data() + m_file->size())
    m_file->release(static_cast<uint64_t>(t.data - m_file->data()), t.nbytes);
}

}  // namespace engine::io
