// Size-capped whole-file read for tokenizer files.
#include "tokenizer/text_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/error.h"

namespace engine::tokenizer {

std::string read_tokenizer_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path + ": cannot determine file size");
  if (static_cast<uint64_t>(size) > k_max_tokenizer_file_bytes)
    throw Error(path + ": file is " + std::to_string(size) + " bytes, more than the " +
                std::to_string(k_max_tokenizer_file_bytes >> 20) + " MiB allowed for a tokenizer file");
  in.seekg(0, std::ios::beg);
  std::string data(static_cast<std::size_t>(size), '\0');
  if (size > 0 && !in.read(data.data(), size)) throw Error(path + ": read error");
  return data;
}

}  // namespace engine::tokenizer
