// GGUF format facts: value types, ggml tensor types and their block sizes, name/key/alignment
// rules, and GgufValue's typed accessors.
//
// Invariant kept by GgufValue: for a non-string scalar, raw holds exactly one element; for a
// non-string array, raw holds count × element-size bytes; strings (scalar: one, array: count) live
// in `strings`. The reader builds values only through from_parts after checking that invariant.
#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/checked.h"
#include "engine/error.h"
#include "io/gguf_format.h"

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian; add byte swaps");

namespace engine::io {

namespace gguf_detail {

bool is_known_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::FLOAT64); }

uint64_t value_type_size(GgufType t) {
  switch (t) {
    case GgufType::UINT8:
    case GgufType::INT8:
    case GgufType::BOOL: return 1;
    case GgufType::UINT16:
    case GgufType::INT16: return 2;
    case GgufType::UINT32:
    case GgufType::INT32:
    case GgufType::FLOAT32: return 4;
    case GgufType::UINT64:
    case GgufType::INT64:
    case GgufType::FLOAT64: return 8;
    case GgufType::STRING:
    case GgufType::ARRAY: return 0;
  }
  return 0;
}

namespace {
// Every ggml type number up to 39, so an unsupported one is refused by name. block_elems == 0
// marks types we do not read (other quantizations) or that ggml removed (4, 5, 31-33, 36-38).
constexpr GgmlTypeInfo k_ggml_types[] = {
    {0, "F32", 1, 4},
    {1, "F16", 1, 2},
    {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},
    {4, "removed Q4_2", 0, 0},
    {5, "removed Q4_3", 0, 0},
    {6, "Q5_0", 32, 22},
    {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},
    {9, "Q8_1", 0, 0},
    {10, "Q2_K", 0, 0},
    {11, "Q3_K", 0, 0},
    {12, "Q4_K", 256, 144},
    {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},
    {15, "Q8_K", 0, 0},
    {16, "IQ2_XXS", 0, 0},
    {17, "IQ2_XS", 0, 0},
    {18, "IQ3_XXS", 0, 0},
    {19, "IQ1_S", 0, 0},
    {20, "IQ4_NL", 0, 0},
    {21, "IQ3_S", 0, 0},
    {22, "IQ2_S", 0, 0},
    {23, "IQ4_XS", 0, 0},
    {24, "I8", 1, 1},
    {25, "I16", 1, 2},
    {26, "I32", 1, 4},
    {27, "I64", 1, 8},
    {28, "F64", 1, 8},
    {29, "IQ1_M", 0, 0},
    {30, "BF16", 1, 2},
    {31, "removed Q4_0_4_4", 0, 0},
    {32, "removed Q4_0_4_8", 0, 0},
    {33, "removed Q4_0_8_8", 0, 0},
    {34, "TQ1_0", 0, 0},
    {35, "TQ2_0", 0, 0},
    {36, "removed IQ4_NL_4_4", 0, 0},
    {37, "removed IQ4_NL_4_8", 0, 0},
    {38, "removed IQ4_NL_8_8", 0, 0},
    {39, "MXFP4", 0, 0},
};
}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
  for (const GgmlTypeInfo& t : k_ggml_types)
    if (t.id == id) return &t;
  return nullptr;
}

const GgmlTypeInfo* supported_ggml_type(uint32_t id) {
  const GgmlTypeInfo* t = ggml_type_info(id);
  return (t != nullptr && t->block_elems != 0) ? t : nullptr;
}

std::string unsupported_type_text(uint32_t id) {
  const GgmlTypeInfo* t = ggml_type_info(id);
  if (t == nullptr) return "unknown tensor type " + std::to_string(id);
  return "tensor type " + std::to_string(id) + " (" + t->name + ") is not supported";
}

std::string printable(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c >= 0x80) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 80) out += "...";
  return out + "'";
}

namespace {
std::string byte_text(size_t i, unsigned char c) {
  static const char* hex = "0123456789abcdef";
  std::string h = "0x";
  h += hex[c >> 4];
  h += hex[c & 15];
  return "byte " + std::to_string(i) + " is " + h;
}
}  // namespace

std::optional<std::string> key_problem(std::string_view key) {
  if (key.empty()) return std::string("is empty");
  if (key.size() > k_max_key_bytes)
    return "is " + std::to_string(key.size()) + " bytes, over the " + std::to_string(k_max_key_bytes) + "-byte limit";
  // The spec asks for ASCII lower_snake_case dot-separated keys; we accept any printable ASCII
  // (real files use a few upper-case keys) and refuse control and non-ASCII bytes.
  for (size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c <= 0x20 || c >= 0x7f) return byte_text(i, c) + ", not printable ASCII";
  }
  return std::nullopt;
}

std::optional<std::string> tensor_name_problem(std::string_view name) {
  if (name.empty()) return std::string("is empty");
  if (name.size() > k_max_tensor_name_bytes)
    return "is " + std::to_string(name.size()) + " bytes, over the " + std::to_string(k_max_tensor_name_bytes) +
           "-byte limit";
  // Names are opaque labels (never used as paths), so '/' and ".." are harmless; control bytes and
  // NUL are refused because C APIs and log lines would cut or garble them.
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c == 0) return "contains a NUL byte at " + std::to_string(i);
    if (c < 0x20 || c == 0x7f) return byte_text(i, c) + ", a control character";
  }
  return std::nullopt;
}

std::optional<std::string> alignment_problem(uint64_t a) {
  if (a == 0) return std::string("is 0");
  if ((a & (a - 1)) != 0) return std::to_string(a) + " is not a power of two";
  if (a > k_max_alignment) return std::to_string(a) + " exceeds the " + std::to_string(k_max_alignment) + "-byte limit";
  return std::nullopt;
}

}  // namespace gguf_detail

using namespace gguf_detail;

std::string_view gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::UINT8: return "UINT8";
    case GgufType::INT8: return "INT8";
    case GgufType::UINT16: return "UINT16";
    case GgufType::INT16: return "INT16";
    case GgufType::UINT32: return "UINT32";
    case GgufType::INT32: return "INT32";
    case GgufType::FLOAT32: return "FLOAT32";
    case GgufType::BOOL: return "BOOL";
    case GgufType::STRING: return "STRING";
    case GgufType::ARRAY: return "ARRAY";
    case GgufType::UINT64: return "UINT64";
    case GgufType::INT64: return "INT64";
    case GgufType::FLOAT64: return "FLOAT64";
  }
  return "unknown";
}

std::string_view ggml_type_name(GgmlType t) {
  const GgmlTypeInfo* i = supported_ggml_type(static_cast<uint32_t>(t));
  return i ? i->name : "unknown";
}

uint64_t ggml_block_elems(GgmlType t) {
  const GgmlTypeInfo* i = supported_ggml_type(static_cast<uint32_t>(t));
  if (i == nullptr) throw Error(unsupported_type_text(static_cast<uint32_t>(t)));
  return i->block_elems;
}

uint64_t ggml_block_bytes(GgmlType t) {
  const GgmlTypeInfo* i = supported_ggml_type(static_cast<uint32_t>(t));
  if (i == nullptr) throw Error(unsupported_type_text(static_cast<uint32_t>(t)));
  return i->block_bytes;
}

uint64_t ggml_type_bytes(GgmlType t, uint64_t n) {
  const GgmlTypeInfo* i = supported_ggml_type(static_cast<uint32_t>(t));
  if (i == nullptr) throw Error(unsupported_type_text(static_cast<uint32_t>(t)));
  if (n % i->block_elems != 0)
    throw Error(std::string(i->name) + " tensor of " + std::to_string(n) + " elements: not a multiple of the " +
                std::to_string(i->block_elems) + "-element block");
  return checked_mul(n / i->block_elems, i->block_bytes, (std::string(i->name) + " tensor byte size").c_str());
}

std::optional<DType> ggml_to_dtype(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return DType::F32;
    case GgmlType::F16: return DType::F16;
    case GgmlType::BF16: return DType::BF16;
    case GgmlType::Q8_0: return DType::Q8_0;
    case GgmlType::Q4_0: return DType::Q4_0;
    case GgmlType::Q4_K: return DType::Q4_K;
    case GgmlType::Q6_K: return DType::Q6_K;
    case GgmlType::Q4_1: return DType::Q4_1;
    case GgmlType::Q5_0: return DType::Q5_0;
    case GgmlType::Q5_1: return DType::Q5_1;
    case GgmlType::Q5_K: return DType::Q5_K;
    default: return std::nullopt;
  }
}

GgmlType dtype_to_ggml(DType t) {
  switch (t) {
    case DType::F32: return GgmlType::F32;
    case DType::F16: return GgmlType::F16;
    case DType::BF16: return GgmlType::BF16;
    case DType::Q8_0: return GgmlType::Q8_0;
    case DType::Q4_0: return GgmlType::Q4_0;
    case DType::Q4_K: return GgmlType::Q4_K;
    case DType::Q6_K: return GgmlType::Q6_K;
    case DType::Q4_1: return GgmlType::Q4_1;
    case DType::Q5_0: return GgmlType::Q5_0;
    case DType::Q5_1: return GgmlType::Q5_1;
    case DType::Q5_K: return GgmlType::Q5_K;
  }
  throw Error("dtype_to_ggml: unknown dtype " + std::to_string(static_cast<int>(t)));
}

// ------------------------------------------------------------------ GgufValue

GgufValue GgufValue::bool_array(const std::vector<bool>& values) {
  GgufValue v;
  v.m_type = GgufType::ARRAY;
  v.m_elem = GgufType::BOOL;
  v.m_count = values.size();
  for (bool b : values) v.m_raw.push_back(b ? 1 : 0);
  return v;
}

GgufValue GgufValue::from_parts(GgufType type, GgufType elem, uint64_t count, std::vector<uint8_t> raw,
                                std::vector<std::string> strings) {
  GgufValue v;
  v.m_type = type;
  v.m_elem = type == GgufType::ARRAY ? elem : GgufType::UINT8;
  v.m_count = type == GgufType::ARRAY ? count : 0;
  v.m_raw = std::move(raw);
  v.m_strings = std::move(strings);
  return v;
}

std::string GgufValue::type_text() const {
  if (m_type == GgufType::ARRAY) return "array of " + std::string(gguf_type_name(m_elem));
  return std::string(gguf_type_name(m_type));
}

namespace {
[[noreturn]] void wrong_type(const std::string& what, const std::string& wanted, const GgufValue& v) {
  throw Error(what + ": expected " + wanted + ", stored as " + v.type_text());
}
}  // namespace

template <class T>
T GgufValue::scalar(const std::string& what) const {
  constexpr GgufType want = type_of<T>();
  if (m_type != want || m_raw.size() != sizeof(T)) wrong_type(what, std::string(gguf_type_name(want)), *this);
  if constexpr (std::is_same_v<T, bool>) {
    return m_raw[0] != 0;
  } else {
    T v;
    std::memcpy(&v, m_raw.data(), sizeof(T));
    return v;
  }
}

const std::string& GgufValue::string(const std::string& what) const {
  if (m_type != GgufType::STRING || m_strings.size() != 1) wrong_type(what, "STRING", *this);
  return m_strings[0];
}

template <class T>
std::vector<T> GgufValue::array_of(const std::string& what) const {
  constexpr GgufType want = type_of<T>();
  if (m_type != GgufType::ARRAY || m_elem != want)
    wrong_type(what, "array of " + std::string(gguf_type_name(want)), *this);
  if (m_raw.size() != m_count * sizeof(T)) throw Error(what + ": array payload size does not match its length");
  std::vector<T> out(m_count);
  if constexpr (std::is_same_v<T, bool>) {
    for (uint64_t i = 0; i < m_count; ++i) out[i] = m_raw[i] != 0;
  } else if (m_count > 0) {
    std::memcpy(out.data(), m_raw.data(), m_raw.size());
  }
  return out;
}

const std::vector<std::string>& GgufValue::string_array(const std::string& what) const {
  if (m_type != GgufType::ARRAY || m_elem != GgufType::STRING) wrong_type(what, "array of STRING", *this);
  return m_strings;
}

std::vector<bool> GgufValue::bool_array_of(const std::string& what) const {
  if (m_type != GgufType::ARRAY || m_elem != GgufType::BOOL) wrong_type(what, "array of BOOL", *this);
  std::vector<bool> out;
  out.reserve(m_raw.size());
  for (uint8_t b : m_raw) out.push_back(b != 0);
  return out;
}

#define WB_GGUF_INSTANTIATE(T)                               \
  template T GgufValue::scalar<T>(const std::string&) const; \
  template std::vector<T> GgufValue::array_of<T>(const std::string&) const;
WB_GGUF_INSTANTIATE(uint8_t)
WB_GGUF_INSTANTIATE(int8_t)
WB_GGUF_INSTANTIATE(uint16_t)
WB_GGUF_INSTANTIATE(int16_t)
WB_GGUF_INSTANTIATE(uint32_t)
WB_GGUF_INSTANTIATE(int32_t)
WB_GGUF_INSTANTIATE(uint64_t)
WB_GGUF_INSTANTIATE(int64_t)
WB_GGUF_INSTANTIATE(float)
WB_GGUF_INSTANTIATE(double)
template bool GgufValue::scalar<bool>(const std::string&) const;
#undef WB_GGUF_INSTANTIATE

}  // namespace engine::io
