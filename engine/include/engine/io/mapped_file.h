// Read-only memory map of a whole file (falls back to reading into memory for empty files).
//
// Invariants: data() is never null (an empty file yields a valid pointer and size 0), the mapping
// lives as long as the MappedFile, and only regular files are accepted (a FIFO or device would
// block or have no stable size). A file truncated by another process while mapped makes reads past
// the new end raise SIGBUS: a loader that must survive that (reliability.md §1.7 case 18) copies
// the bytes it needs, or runs the load where the signal is handled.
// Errors name the path and the errno text, e.g. "m.bin: cannot open: No such file or directory".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace engine::io {

class MappedFile {
 public:
  static std::unique_ptr<MappedFile> open(const std::string& path);  // throws engine::Error
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return m_data; }
  // Tells the kernel the bytes [offset, offset+length) will not be read again soon, so their pages
  // can leave this process's resident set (a loader that copies tensors out keeps peak RSS near one
  // copy of the model instead of two). Only whole pages inside the range are dropped; re-reading
  // them later is still valid (they come back from the file).
  void release(uint64_t offset, uint64_t length) const;
  uint64_t size() const { return m_size; }

 private:
  MappedFile() = default;
  const uint8_t* m_data = nullptr;
  uint64_t m_size = 0;
  void* m_map = nullptr;
};

// Writes `size` bytes to `path` atomically: a temp file beside it, fsync, then rename over it, then
// fsync of the directory. On any failure (disk full, directory missing, rename refused) the temp
// file is removed, an existing `path` is left untouched, and engine::Error names the path and errno.
// An existing destination's permission bits are kept.
void write_file_atomic(const std::string& path, const void* data, uint64_t size);

// The same, for a file assembled from several buffers written back to back (a header plus tensor
// data), so writers need not copy a whole model into one buffer first.
struct WritePart {
  const void* data;
  uint64_t size;
};
void write_file_atomic(const std::string& path, const std::vector<WritePart>& parts);

}  // namespace engine::io
