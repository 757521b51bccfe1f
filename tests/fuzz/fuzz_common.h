// Helpers shared by the libFuzzer targets of this directory.
//
// Several loaders take a path, not bytes; MemoryFile hands them the fuzz input as an anonymous
// in-memory file (memfd) named /proc/self/fd/N, so no target touches the disk and parallel jobs
// cannot collide. Inputs that carry several files (a vocabulary and the text to encode, a chat
// template and the messages to render) are cut by split_parts: every part but the last ends at a NUL
// byte, the last part takes the rest, so the last (usually binary) part may itself hold NULs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engine {
class Tokenizer;
}

namespace wb_fuzz {

class MemoryFile {
 public:
  MemoryFile(std::string_view bytes, const char* name);
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  const std::string& path() const { return m_path; }

 private:
  int m_fd = -1;
  std::string m_path;
};

// Exactly `n` parts (missing ones empty).
std::vector<std::string_view> split_parts(std::string_view input, size_t n);

std::string_view as_text(const uint8_t* data, size_t size);

// A small real byte-level BPE tokenizer with chat special tokens (tests/data/chat/tiny_chat_tokenizer.json),
// loaded once; for targets that need some tokenizer to encode what they parsed.
const engine::Tokenizer& fixture_tokenizer();

}  // namespace wb_fuzz
