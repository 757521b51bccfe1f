// See fuzz_common.h.
#include "fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "engine/tokenizer.h"

namespace wb_fuzz {

MemoryFile::MemoryFile(std::string_view bytes, const char* name) {
  m_fd = memfd_create(name, MFD_CLOEXEC);
  if (m_fd < 0) {
    std::perror("memfd_create");
    std::abort();  // the harness itself is broken, not the code under test
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(m_fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      std::perror("write");
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  m_path = "/proc/self/fd/" + std::to_string(m_fd);
}

MemoryFile::~MemoryFile() { ::close(m_fd); }

std::vector<std::string_view> split_parts(std::string_view input, size_t n) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < n) {
    const size_t nul = input.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(input.substr(0, nul));
    input.remove_prefix(nul + 1);
  }
  parts.push_back(input);
  parts.resize(n);
  return parts;
}

std::string_view as_text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

const engine::Tokenizer& fixture_tokenizer() {
  static const std::unique_ptr<engine::Tokenizer> tokenizer =
      engine::Tokenizer::from_tokenizer_json(WB_TEST_DATA_DIR "/chat/tiny_chat_tokenizer.json");
  return *tokenizer;
}

}  // namespace wb_fuzz
