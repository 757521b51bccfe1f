// Reading a tokenizer side-file (vocab.json, merges.txt, tokenizer.json) into memory, size-capped.
//
// The cap bounds memory before anything is allocated from a hostile or mistaken path (a 10 GB file
// named tokenizer.json): the largest real tokenizer files are a few tens of MB.
#pragma once

#include <cstdint>
#include <string>

namespace engine::tokenizer {

inline constexpr uint64_t k_max_tokenizer_file_bytes = 512ull << 20;

// Whole file contents; throws engine::Error naming the path when it cannot be opened or read, or is
// larger than k_max_tokenizer_file_bytes.
std::string read_tokenizer_file(const std::string& path);

}  // namespace engine::tokenizer
