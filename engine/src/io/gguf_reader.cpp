// GGUF reader: validate the whole file before trusting any of it.
//
// Order of checks, each one guarding the next (research/reliability.md §1.2, §1.7 cases 1-13):
//   magic -> version 2/3 (a byte-swapped version means a big-endian file) -> n_tensors and n_kv
//   bounded together by the bytes left (each item has a minimum encoded size) -> per KV: key length
//   <= 65535 and <= bytes left, key printable ASCII and unique, known value type, array element type
//   known and not ARRAY, array count × element size <= bytes left (strings: count × 8), every
//   string length <= cap and <= bytes left, bool bytes 0/1 -> general.alignment UINT32, power of
//   two, <= 1 MiB -> per tensor: name rules, unique, n_dims 1..4, each dim 1..2^62, element count
//   checked (and < 2^63), type supported, ne[0] a whole number of blocks, byte size checked,
//   offset aligned -> data section start = align_up(header end) inside the file -> in file order,
//   each offset == the aligned end of the previous tensor (contiguous, no overlap, ascending),
//   offset + nbytes checked and inside the file -> nothing after the last tensor but its padding.
// Only then are data pointers formed. All arithmetic on file values is checked (engine/checked.h);
// a Cursor never reads past the end: it checks the bytes remaining first.
#include <algorithm>
#include <cstring>

#include "engine/checked.h"
#include "engine/error.h"
#include "io/gguf_format.h"

namespace engine::io {

using namespace gguf_detail;

namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Bounds-checked little-endian reader over the file image. Every read names the field and its
// offset when the file ends first.
class Cursor {
 public:
  Cursor(const uint8_t* p, uint64_t size, const std::string& label) : m_p(p), m_size(size), m_label(label) {}

  uint64_t pos() const { return m_pos; }
  uint64_t remaining() const { return m_size - m_pos; }

  [[noreturn]] void fail(const std::string& what, uint64_t at) const {
    throw Error(m_label + ": " + what + " (byte offset " + std::to_string(at) + ")");
  }
  void need(uint64_t n, const std::string& field) const {
    if (n > remaining())
      fail(field + ": needs " + std::to_string(n) + " bytes but the file ends after " + std::to_string(remaining()) +
               " (file is " + std::to_string(m_size) + " bytes)",
           m_pos);
  }
  const uint8_t* take(uint64_t n, const std::string& field) {
    need(n, field);
    const uint8_t* p = m_p + m_pos;
    m_pos += n;
    return p;
  }
  uint8_t u8(const std::string& field) { return *take(1, field); }
  uint32_t u32(const std::string& field) {
    const uint8_t* p = take(4, field);
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  uint64_t u64(const std::string& field) {
    const uint8_t* p = take(8, field);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  // u64 length + bytes; the length is checked against `cap` and the bytes left before any copy.
  std::string string(const std::string& field, uint64_t cap) {
    const uint64_t at = m_pos;
    const uint64_t len = u64(field + " length");
    if (len > cap)
      fail(field + ": length " + std::to_string(len) + " exceeds the " + std::to_string(cap) + "-byte limit", at);
    if (len > remaining())
      fail(field + ": length " + std::to_string(len) + " runs past the end of the file (" +
               std::to_string(remaining()) + " bytes left)",
           at);
    const uint8_t* p = take(len, field);
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
  }

 private:
  const uint8_t* m_p;
  uint64_t m_size;
  uint64_t m_pos = 0;
  const std::string& m_label;
};

GgufType read_value_type(Cursor& c, const std::string& field) {
  const uint64_t at = c.pos();
  const uint32_t t = c.u32(field);
  if (!is_known_value_type(t)) c.fail(field + ": unknown value type " + std::to_string(t) + " (" + hex32(t) + ")", at);
  return static_cast<GgufType>(t);
}

// Reads `count` fixed-size elements of `type` into raw bytes, checking bools are 0/1.
std::vector<uint8_t> read_fixed(Cursor& c, GgufType type, uint64_t count, bool is_array, const std::string& field) {
  const uint64_t esize = value_type_size(type);
  const uint64_t at = c.pos();
  if (!is_array) c.need(esize, field);
  if (count > c.remaining() / esize)  // division, so count × esize cannot wrap
    c.fail(field + ": " + std::to_string(count) + " elements of " + std::string(gguf_type_name(type)) +
               " need more than the " + std::to_string(c.remaining()) + " bytes left",
           at);
  const uint64_t n = count * esize;
  const uint8_t* p = c.take(n, field);
  if (type == GgufType::BOOL)
    for (uint64_t i = 0; i < n; ++i)
      if (p[i] > 1) {
        std::string where = field;  // built by append: GCC 12 warns falsely on "[" + std::string
        if (is_array) where.append("[").append(std::to_string(i)).append("]");
        c.fail(where + ": bool byte is " + std::to_string(p[i]) + ", must be 0 or 1", at + i);
      }
  return std::vector<uint8_t>(p, p + n);
}

GgufValue read_value(Cursor& c, const std::string& field) {
  const GgufType type = read_value_type(c, field + " value type");
  if (type == GgufType::STRING)
    return GgufValue::from_parts(type, GgufType::UINT8, 0, {}, {c.string(field, k_max_string_bytes)});
  if (type != GgufType::ARRAY)
    return GgufValue::from_parts(type, GgufType::UINT8, 0, read_fixed(c, type, 1, false, field), {});

  const uint64_t elem_at = c.pos();
  const GgufType elem = read_value_type(c, field + " array element type");
  if (elem == GgufType::ARRAY) c.fail(field + ": nested arrays are not supported", elem_at);
  const uint64_t count_at = c.pos();
  const uint64_t count = c.u64(field + " array length");
  if (elem != GgufType::STRING)
    return GgufValue::from_parts(type, elem, count, read_fixed(c, elem, count, true, field), {});

  // Every string takes at least its 8-byte length, which bounds the count before reserving.
  if (count > c.remaining() / 8)
    c.fail(field + ": array of " + std::to_string(count) + " strings cannot fit in the " +
               std::to_string(c.remaining()) + " bytes left",
           count_at);
  std::vector<std::string> strings;
  strings.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i)
    strings.push_back(c.string(field + "[" + std::to_string(i) + "]", k_max_string_bytes));
  return GgufValue::from_parts(type, elem, count, {}, std::move(strings));
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

struct TensorAt {
  GgufTensor t;
  uint64_t info_at = 0;    // file offset of the tensor info (for messages)
  uint64_t offset_at = 0;  // file offset of its offset field
};

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  auto file = MappedFile::open(path);
  auto g = from_memory(file->data(), file->size(), path);
  g->m_file = std::move(file);
  return g;
}

std::unique_ptr<GgufFile> GgufFile::from_memory(const uint8_t* bytes, uint64_t size, std::string label) {
  if (bytes == nullptr && size > 0) throw Error(label + ": null buffer");
  auto g = std::unique_ptr<GgufFile>(new GgufFile());
  g->m_label = std::move(label);
  const std::string& L = g->m_label;
  Cursor c(bytes, size, L);

  // ---- header
  if (size < 4)
    c.fail("file is " + std::to_string(size) + " bytes, too small for the 4-byte magic: not a GGUF file", 0);
  const uint32_t magic = c.u32("magic");
  if (magic != k_magic) {
    std::string shown;
    for (int i = 0; i < 4; ++i) {
      const char ch = static_cast<char>(bytes[i]);
      shown += (ch >= 0x20 && ch < 0x7f) ? std::string(1, ch) : "?";
    }
    c.fail("bad magic '" + shown + "' (" + hex32(magic) + "), expected 'GGUF': not a GGUF file", 0);
  }
  const uint32_t version = c.u32("version");
  if (version == 0x02000000u || version == 0x03000000u || (version != 0 && (version & 0xffffu) == 0))
    c.fail("version field " + hex32(version) + " looks byte-swapped: big-endian file not supported", 4);
  if (version != 2 && version != 3)
    c.fail("version " + std::to_string(version) + " not supported (only versions 2 and 3)", 4);
  g->m_version = version;
  const uint64_t n_tensors = c.u64("tensor count");
  const uint64_t n_kv = c.u64("metadata kv count");
  {
    // Each item has a minimum encoded size; both counts together must fit in what is left.
    const uint64_t left = c.remaining();
    if (n_kv > left / k_min_kv_bytes || n_tensors > left / k_min_tensor_info_bytes ||
        n_kv * k_min_kv_bytes + n_tensors * k_min_tensor_info_bytes > left)
      c.fail("tensor count " + std::to_string(n_tensors) + " and metadata kv count " + std::to_string(n_kv) +
                 " cannot fit in the " + std::to_string(left) + " bytes after the header",
             8);
  }

  // ---- metadata
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t at = c.pos();
    const std::string kv_field = "metadata kv #" + std::to_string(i) + " key";
    std::string key = c.string(kv_field, k_max_key_bytes);
    if (auto problem = key_problem(key)) c.fail(kv_field + " " + printable(key) + " " + *problem, at);
    if (g->m_key_index.count(key)) c.fail("duplicate metadata key " + printable(key), at);
    GgufValue v = read_value(c, "metadata " + printable(key));
    g->m_key_index.emplace(key, g->m_metadata.size());
    g->m_metadata.emplace_back(std::move(key), std::move(v));
  }
  if (const GgufValue* a = g->find_value("general.alignment")) {
    if (a->type() != GgufType::UINT32)
      throw Error(L + ": metadata 'general.alignment': must be UINT32, stored as " + a->type_text());
    const uint32_t align = a->scalar<uint32_t>("general.alignment");
    if (auto problem = alignment_problem(align)) throw Error(L + ": metadata 'general.alignment': " + *problem);
    g->m_alignment = align;
  }
  const uint64_t align = g->m_alignment;

  // ---- tensor infos
  std::vector<TensorAt> infos;
  infos.reserve(static_cast<size_t>(std::min<uint64_t>(n_tensors, 4096)));  // bounded, grows if real
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorAt ta;
    ta.info_at = c.pos();
    const std::string nfield = "tensor #" + std::to_string(i) + " name";
    ta.t.name = c.string(nfield, k_max_tensor_name_bytes);
    if (auto problem = tensor_name_problem(ta.t.name))
      c.fail(nfield + " " + printable(ta.t.name) + " " + *problem, ta.info_at);
    if (g->m_tensor_index.count(ta.t.name)) c.fail("duplicate tensor name " + printable(ta.t.name), ta.info_at);
    const std::string ctx = "tensor " + printable(ta.t.name);

    const uint64_t dims_at = c.pos();
    const uint32_t n_dims = c.u32(ctx + " n_dims");
    if (n_dims < 1 || n_dims > k_max_dims)
      c.fail(ctx + ": n_dims " + std::to_string(n_dims) + " out of range 1.." + std::to_string(k_max_dims), dims_at);
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne_at = c.pos();
      const std::string dfield = ctx + " ne[" + std::to_string(d) + "]";
      const uint64_t ne = c.u64(dfield);
      if (ne == 0) c.fail(dfield + " is 0: empty tensors are not supported", ne_at);
      if (ne > k_max_dim)
        c.fail(dfield + " = " + std::to_string(ne) + " (" + std::to_string(static_cast<int64_t>(ne)) +
                   " as int64) exceeds the 2^62 limit",
               ne_at);
      ta.t.shape.push_back(ne);
      uint64_t r;
      if (__builtin_mul_overflow(numel, ne, &r) || r > uint64_t(INT64_MAX))
        c.fail(ctx + ": element count of shape " + shape_text(ta.t.shape) + " overflows int64", ne_at);
      numel = r;
    }
    ta.t.numel = numel;

    const uint64_t type_at = c.pos();
    const uint32_t type = c.u32(ctx + " type");
    const GgmlTypeInfo* info = supported_ggml_type(type);
    if (info == nullptr) c.fail(ctx + ": " + unsupported_type_text(type), type_at);
    ta.t.type = static_cast<GgmlType>(type);
    if (ta.t.shape[0] % info->block_elems != 0)
      c.fail(ctx + ": ne[0] = " + std::to_string(ta.t.shape[0]) + " is not a multiple of the " + info->name +
                 " block size " + std::to_string(info->block_elems),
             dims_at + 4);
    uint64_t nbytes;
    if (__builtin_mul_overflow(numel / info->block_elems, info->block_bytes, &nbytes) || nbytes > uint64_t(INT64_MAX))
      c.fail(ctx + ": byte size of " + std::to_string(numel) + " " + info->name + " elements overflows", type_at);
    ta.t.nbytes = nbytes;

    ta.offset_at = c.pos();
    ta.t.offset = c.u64(ctx + " offset");
    if (ta.t.offset % align != 0)
      c.fail(ctx + ": offset " + std::to_string(ta.t.offset) + " is not a multiple of the alignment " +
                 std::to_string(align),
             ta.offset_at);
    g->m_tensor_index.emplace(ta.t.name, infos.size());
    infos.push_back(std::move(ta));
  }

  // ---- data section
  const uint64_t header_end = c.pos();
  uint64_t data_start;
  if (__builtin_add_overflow(header_end, align - 1, &data_start)) c.fail("data section start overflows", header_end);
  data_start &= ~(align - 1);
  if (data_start > size && !infos.empty())
    c.fail("data section would start at " + std::to_string(data_start) + " (header end padded to " +
               std::to_string(align) + "), past the end of the " + std::to_string(size) + "-byte file",
           header_end);
  g->m_data_offset = std::min(data_start, size);
  const uint64_t data_size = size - g->m_data_offset;

  uint64_t expected = 0;  // where the next tensor must start, relative to the data section
  for (TensorAt& ta : infos) {
    const std::string ctx = "tensor " + printable(ta.t.name);
    if (ta.t.offset != expected)
      c.fail(ctx + ": offset " + std::to_string(ta.t.offset) + " must be " + std::to_string(expected) +
                 " (tensors are stored in order, each at the aligned end of the previous one)" +
                 (ta.t.offset < expected ? ": it overlaps the previous tensor" : ": it leaves a gap"),
             ta.offset_at);
    uint64_t end;
    if (__builtin_add_overflow(ta.t.offset, ta.t.nbytes, &end)) c.fail(ctx + ": offset + size overflows", ta.offset_at);
    if (end > data_size)
      c.fail(ctx + ": data [" + std::to_string(ta.t.offset) + ", " + std::to_string(end) +
                 ") of the data section (file bytes " + std::to_string(g->m_data_offset + ta.t.offset) + ".." +
                 std::to_string(g->m_data_offset + end) + ") runs past the end of the " + std::to_string(size) +
                 "-byte file",
             ta.offset_at);
    // end <= data_size <= 2^64 - 1 - align is not guaranteed, so pad with a check.
    if (__builtin_add_overflow(end, align - 1, &expected)) c.fail(ctx + ": padded end overflows", ta.offset_at);
    expected &= ~(align - 1);
  }
  if (expected < data_size)
    c.fail("trailing data: " + std::to_string(data_size - expected) + " bytes after the " +
               (infos.empty() ? "header padding" : "last tensor's padding"),
           g->m_data_offset + expected);

  g->m_tensors.reserve(infos.size());
  for (TensorAt& ta : infos) {
    ta.t.data = bytes + g->m_data_offset + ta.t.offset;
    g->m_tensors.push_back(std::move(ta.t));
  }
  return g;
}

// ------------------------------------------------------------------ accessors

const GgufValue* GgufFile::find_value(const std::string& key) const {
  auto it = m_key_index.find(key);
  return it == m_key_index.end() ? nullptr : &m_metadata[it->second].second;
}

const GgufValue& GgufFile::require(const std::string& key) const {
  const GgufValue* v = find_value(key);
  if (v == nullptr) throw Error(m_label + ": metadata key " + printable(key) + " is missing");
  return *v;
}

namespace {
std::string what_of(const std::string& label, const std::string& key) { return label + ": metadata " + printable(key); }
}  // namespace

uint32_t GgufFile::get_u32(const std::string& key) const {
  return require(key).scalar<uint32_t>(what_of(m_label, key));
}
int32_t GgufFile::get_i32(const std::string& key) const { return require(key).scalar<int32_t>(what_of(m_label, key)); }
uint64_t GgufFile::get_u64(const std::string& key) const {
  return require(key).scalar<uint64_t>(what_of(m_label, key));
}
float GgufFile::get_f32(const std::string& key) const { return require(key).scalar<float>(what_of(m_label, key)); }
bool GgufFile::get_bool(const std::string& key) const { return require(key).scalar<bool>(what_of(m_label, key)); }
const std::string& GgufFile::get_string(const std::string& key) const {
  return require(key).string(what_of(m_label, key));
}
const std::vector<std::string>& GgufFile::get_string_array(const std::string& key) const {
  return require(key).string_array(what_of(m_label, key));
}
std::vector<float> GgufFile::get_f32_array(const std::string& key) const {
  return require(key).array_of<float>(what_of(m_label, key));
}
std::vector<int32_t> GgufFile::get_i32_array(const std::string& key) const {
  return require(key).array_of<int32_t>(what_of(m_label, key));
}

uint64_t GgufFile::get_uint(const std::string& key) const {
  const GgufValue& v = require(key);
  const std::string what = what_of(m_label, key);
  switch (v.type()) {
    case GgufType::UINT8: return v.scalar<uint8_t>(what);
    case GgufType::UINT16: return v.scalar<uint16_t>(what);
    case GgufType::UINT32: return v.scalar<uint32_t>(what);
    case GgufType::UINT64: return v.scalar<uint64_t>(what);
    default: throw Error(what + ": expected an unsigned integer, stored as " + v.type_text());
  }
}

const std::string& GgufFile::architecture() const {
  const std::string& a = get_string("general.architecture");
  if (a.empty()) throw Error(m_label + ": metadata 'general.architecture' is empty");
  for (char ch : a)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
      throw Error(m_label + ": metadata 'general.architecture' " + printable(a) + " must match [a-z0-9_]+");
  return a;
}

const GgufTensor* GgufFile::find(const std::string& name) const {
  auto it = m_tensor_index.find(name);
  return it == m_tensor_index.end() ? nullptr : &m_tensors[it->second];
}

void GgufFile::release(const GgufTensor& t) const { release(t, 0, t.nbytes); }

void GgufFile::release(const GgufTensor& t, uint64_t offset, uint64_t length) const {
  if (offset >= t.nbytes) return;
  length = std::min(length, t.nbytes - offset);
  if (m_file && t.data >= m_file->data() && t.nbytes <= m_file->size() &&
      t.data + t.nbytes <= m_file->data() + m_file->size())
    m_file->release(static_cast<uint64_t>(t.data - m_file->data()) + offset, length);
}

}  // namespace engine::io
