// GGUF reader and writer (ggml-org/ggml docs/gguf.md, versions 2 and 3, little-endian only).
//
// Layout: "GGUF" u32 version, u64 n_tensors, u64 n_kv, n_kv × (string key, u32 type, value),
// n_tensors × (string name, u32 n_dims, n_dims × u64 ne, u32 ggml type, u64 offset), padding to
// `general.alignment` (default 32), then the data section; tensor offsets are relative to it.
// Strings are u64 length + bytes, no NUL terminator.
//
// The reader treats the file as hostile (research/reliability.md §1.1-1.4, §1.7 cases 1-13): every
// count and length is bounded by the bytes remaining before anything is allocated, every size and
// offset goes through checked arithmetic, and only after the whole file validated is a data pointer
// formed, so every GgufTensor::data..data+nbytes lies inside the file. Every failure is an
// engine::Error naming the file, the field and its byte offset.
// Deliberately stricter than the spec where real writers never go: nested arrays, empty tensor
// names, zero dims, n_dims 0, tensors that are not stored in file order back to back (each at the
// aligned end of the previous one, as llama.cpp and gguf-py write them) and trailing bytes after
// the last tensor's padding are refused. (A file without tensors may end before the header's
// padding: there is no data to misplace.)
// Shapes are in GGUF order: shape[0] (ne[0]) is the fastest-varying dimension, i.e. the reverse of
// the row-major (PyTorch) shape.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/dtype.h"
#include "engine/io/mapped_file.h"

namespace engine::io {

// Metadata value types, numbered as in the file.
enum class GgufType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
std::string_view gguf_type_name(GgufType t);  // "UINT8", ..., "unknown"

// Tensor element types we recognise, numbered as ggml numbers them (other ggml types are refused
// by name). Block sizes: F32/F16/BF16 and the integer types 1 element; Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 32;
// Q4_K/Q5_K/Q6_K 256.
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
};
std::string_view ggml_type_name(GgmlType t);
uint64_t ggml_block_elems(GgmlType t);  // elements per block
uint64_t ggml_block_bytes(GgmlType t);  // bytes per block
// Bytes of `n` elements; throws engine::Error on a partial block or overflow.
uint64_t ggml_type_bytes(GgmlType t, uint64_t n);
// The engine's DType for a GGUF tensor type, if it has one (the float types and every quantized type
// with a DType: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K).
std::optional<DType> ggml_to_dtype(GgmlType t);
GgmlType dtype_to_ggml(DType t);

// One metadata value: a scalar, a string, or a flat array of one of those.
// Non-string payloads are kept as their little-endian file bytes (`raw`), strings in `strings`.
class GgufValue {
 public:
  GgufValue() = default;

  // Scalars: GgufValue(uint32_t(7)), GgufValue(1.5f), GgufValue(true), GgufValue(std::string("x")).
  template <class T, std::enable_if_t<!std::is_same_v<std::decay_t<T>, const char*>, int> = 0>
  explicit GgufValue(T v) {
    if constexpr (std::is_same_v<T, std::string>) {
      m_type = GgufType::STRING;
      m_strings.push_back(std::move(v));
    } else {
      m_type = type_of<T>();
      append_raw(v);
    }
  }
  explicit GgufValue(const char* s) : GgufValue(std::string(s)) {}

  // Arrays: GgufValue::array(std::vector<float>{...}); bools via bool_array (std::vector<bool> is packed).
  template <class T>
  static GgufValue array(const std::vector<T>& values) {
    GgufValue v;
    v.m_type = GgufType::ARRAY;
    v.m_count = values.size();
    if constexpr (std::is_same_v<T, std::string>) {
      v.m_elem = GgufType::STRING;
      v.m_strings = values;
    } else {
      static_assert(!std::is_same_v<T, bool>, "use GgufValue::bool_array");
      v.m_elem = type_of<T>();
      for (const T& x : values) v.append_raw(x);
    }
    return v;
  }
  static GgufValue bool_array(const std::vector<bool>& values);

  GgufType type() const { return m_type; }
  bool is_array() const { return m_type == GgufType::ARRAY; }
  GgufType elem_type() const { return m_elem; }  // meaningful for arrays only
  uint64_t array_size() const { return m_count; }
  // "UINT32", "STRING", "array of FLOAT32", ...
  std::string type_text() const;

  // Exact-type accessors: throw engine::Error (prefixed with `what`) when the stored type differs.
  // No silent widening of array elements: a u8[] is never read as float[] (§1.7 case 14).
  template <class T>
  T scalar(const std::string& what) const;
  const std::string& string(const std::string& what) const;
  template <class T>
  std::vector<T> array_of(const std::string& what) const;
  const std::vector<std::string>& string_array(const std::string& what) const;
  std::vector<bool> bool_array_of(const std::string& what) const;

  bool operator==(const GgufValue& o) const {
    return m_type == o.m_type && m_elem == o.m_elem && m_count == o.m_count && m_raw == o.m_raw &&
           m_strings == o.m_strings;
  }

  // The element type number of a C++ type (compile error for unsupported ones).
  template <class T>
  static constexpr GgufType type_of() {
    if constexpr (std::is_same_v<T, uint8_t>) return GgufType::UINT8;
    else if constexpr (std::is_same_v<T, int8_t>) return GgufType::INT8;
    else if constexpr (std::is_same_v<T, uint16_t>) return GgufType::UINT16;
    else if constexpr (std::is_same_v<T, int16_t>) return GgufType::INT16;
    else if constexpr (std::is_same_v<T, uint32_t>) return GgufType::UINT32;
    else if constexpr (std::is_same_v<T, int32_t>) return GgufType::INT32;
    else if constexpr (std::is_same_v<T, float>) return GgufType::FLOAT32;
    else if constexpr (std::is_same_v<T, bool>) return GgufType::BOOL;
    else if constexpr (std::is_same_v<T, uint64_t>) return GgufType::UINT64;
    else if constexpr (std::is_same_v<T, int64_t>) return GgufType::INT64;
    else if constexpr (std::is_same_v<T, double>) return GgufType::FLOAT64;
    else static_assert(sizeof(T) == 0, "not a GGUF value type");
  }

  // Raw access for the reader/writer.
  const std::vector<uint8_t>& raw() const { return m_raw; }
  const std::vector<std::string>& strings() const { return m_strings; }
  static GgufValue from_parts(GgufType type, GgufType elem, uint64_t count, std::vector<uint8_t> raw,
                              std::vector<std::string> strings);

 private:
  template <class T>
  void append_raw(T v) {
    const size_t old = m_raw.size();
    m_raw.resize(old + sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      m_raw[old] = v ? 1 : 0;
    } else {
      std::memcpy(m_raw.data() + old, &v, sizeof(T));  // the file is little-endian; so is every target we build for
    }
  }

  GgufType m_type = GgufType::UINT8;
  GgufType m_elem = GgufType::UINT8;
  uint64_t m_count = 0;
  std::vector<uint8_t> m_raw;
  std::vector<std::string> m_strings;
};

struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<uint64_t> shape;  // ne[0] first (fastest-varying)
  uint64_t offset = 0;          // relative to the data section
  uint64_t numel = 0;
  uint64_t nbytes = 0;
  const uint8_t* data = nullptr;  // inside the file
};

class GgufFile {
 public:
  // Maps and validates the file. Throws engine::Error.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Validates an in-memory image (the caller keeps `bytes` alive). Used by tests and fuzzers.
  static std::unique_ptr<GgufFile> from_memory(const uint8_t* bytes, uint64_t size, std::string label);

  const std::string& path() const { return m_label; }
  uint32_t version() const { return m_version; }
  uint32_t alignment() const { return m_alignment; }
  uint64_t data_offset() const { return m_data_offset; }  // file offset of the data section

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return m_metadata; }
  const GgufValue* find_value(const std::string& key) const;
  bool has(const std::string& key) const { return find_value(key) != nullptr; }

  // Typed getters: throw engine::Error naming the file and key when the key is missing or has
  // another type (exact type; get_uint accepts any unsigned integer type UINT8..UINT64).
  uint32_t get_u32(const std::string& key) const;
  int32_t get_i32(const std::string& key) const;
  uint64_t get_u64(const std::string& key) const;
  uint64_t get_uint(const std::string& key) const;
  float get_f32(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const std::vector<std::string>& get_string_array(const std::string& key) const;
  std::vector<float> get_f32_array(const std::string& key) const;
  std::vector<int32_t> get_i32_array(const std::string& key) const;
  // general.architecture: required, [a-z0-9_]+ (throws otherwise).
  const std::string& architecture() const;

  // Tensors in file (= data) order.
  const std::vector<GgufTensor>& tensors() const { return m_tensors; }
  const GgufTensor* find(const std::string& name) const;
  // Drops a tensor's pages once the caller copied it (see MappedFile::release).
  void release(const GgufTensor& t) const;
  // The same for bytes [offset, offset + length) of t's data (clamped to the tensor).
  void release(const GgufTensor& t, uint64_t offset, uint64_t length) const;

 private:
  GgufFile() = default;
  const GgufValue& require(const std::string& key) const;

  std::unique_ptr<MappedFile> m_file;
  std::string m_label;
  uint32_t m_version = 0;
  uint32_t m_alignment = 32;
  uint64_t m_data_offset = 0;
  std::vector<std::pair<std::string, GgufValue>> m_metadata;
  std::map<std::string, size_t> m_key_index;
  std::vector<GgufTensor> m_tensors;
  std::map<std::string, size_t> m_tensor_index;
};

struct GgufTensorToWrite {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<uint64_t> shape;  // ne[0] first
  const void* data = nullptr;   // ggml_type_bytes(type, numel) bytes
};

using GgufMetadata = std::vector<std::pair<std::string, GgufValue>>;

// Encodes a version-3 GGUF image. `alignment` must be a power of two in [1, 1 MiB]; when it is not
// 32 a `general.alignment` UINT32 entry is added (an existing one must be UINT32 and agree).
// Refuses anything the reader would refuse (names, dims, types, duplicate keys), so a written file
// always reads back.
std::vector<uint8_t> encode_gguf(const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors,
                                 uint32_t alignment = 32);
// The same, written atomically (temp file + fsync + rename) without first copying tensor data.
void write_gguf(const std::string& path, const GgufMetadata& metadata, const std::vector<GgufTensorToWrite>& tensors,
                uint32_t alignment = 32);

}  // namespace engine::io
