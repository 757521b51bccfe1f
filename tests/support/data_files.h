// Shared test helpers for training-data tests: a file of given bytes in a temporary folder, and the
// GPT-2 tokenizer shipped in resources/.
#pragma once

#include <QTemporaryDir>

#include <fstream>
#include <memory>
#include <string>

#include "engine/tokenizer.h"

inline std::string write_file(const QTemporaryDir& dir, const char* name, const std::string& bytes) {
  const std::string path = dir.filePath(QString::fromUtf8(name)).toStdString();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::unique_ptr<engine::Tokenizer> gpt2() {
  const std::string d = WB_TEST_DATA_DIR "/../../resources/tokenizers/gpt2";
  return engine::Tokenizer::from_gpt2_files(d + "/vocab.json", d + "/merges.txt");
}
