// safetensors reader and writer.
//
// Format: u64 LE header length N, N bytes of UTF-8 JSON beginning with '{' (trailing spaces allowed),
// then the byte buffer. Each tensor: {"dtype","shape","data_offsets":[begin,end)} relative to the buffer.
// The reader validates before trusting anything (research/reliability.md §1.5, §1.7 cases 19-22):
// header cap 100 MB, N+8 within the file, UTF-8 JSON object, no duplicate keys, __metadata__ is a
// string->string map, known dtypes, shape products and byte sizes overflow-checked, size == end-begin,
// tensors contiguous with no gaps or overlaps covering the whole buffer exactly, no NUL in names.
// Every failure is an engine::Error naming the file and the field.
// Deliberately stricter than the reference reader where real writers never go: a header shorter
// than 8 bytes (every writer pads it to 8), and tensor entries with keys other than the three above,
// are refused. Unsupported dtypes (F8_*, U16..U64, sub-byte F4/F6) are refused by name.
// tensors() lists tensors in data order (by begin offset); every data pointer lies inside the file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/mapped_file.h"

namespace engine::io {

enum class StDType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

std::string_view st_dtype_name(StDType t);  // the header spelling: "F32", "BF16", "BOOL", ...
uint64_t st_dtype_size(StDType t);          // bytes per element

struct StTensor {
  std::string name;
  StDType dtype;
  std::vector<uint64_t> shape;
  const uint8_t* data = nullptr;  // points into the mapped file
  uint64_t nbytes = 0;
  uint64_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps and validates the file. Throws engine::Error.
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);
  // Validates an in-memory image (the caller keeps `bytes` alive). Used by tests and fuzzers.
  static std::unique_ptr<SafetensorsFile> from_memory(const uint8_t* bytes, uint64_t size, std::string label);

  const std::vector<StTensor>& tensors() const { return m_tensors; }
  const StTensor* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return m_metadata; }
  const std::string& path() const { return m_label; }

  // Reads a tensor as f32 (from F32, F16, BF16 or F64), checking its element count.
  std::vector<float> read_f32(const StTensor& t) const;
  // Drops the tensor's pages from memory once the caller has copied it (see MappedFile::release).
  void release(const StTensor& t) const;

 private:
  std::unique_ptr<MappedFile> m_file;
  std::string m_label;
  std::vector<StTensor> m_tensors;
  std::map<std::string, std::string> m_metadata;
};

struct StTensorToWrite {
  std::string name;
  StDType dtype;
  std::vector<uint64_t> shape;
  const void* data;  // numel * element size bytes
};

// Re-points every F32 tensor of `tensors` at an F16 copy kept in `storage` (IEEE round to nearest even), for
// a file of half the size. Throws engine::Error naming the first tensor holding a value beyond f16's range
// (|x| > 65504 would become infinite) or a NaN.
void narrow_f32_tensors_to_f16(std::vector<StTensorToWrite>& tensors, std::vector<std::vector<uint16_t>>& storage);

// Writes atomically (temp file + fsync + rename), so a crash never leaves a half-written file.
void write_safetensors(const std::string& path, const std::vector<StTensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace engine::io
