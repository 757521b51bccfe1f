// A tiny GPT-2 (2 layers, 32 wide, the 512-token test tokenizer) written as a Hugging Face folder,
// for tests that need a model that reads and writes text in milliseconds. The tokenizer files go to
// <dir>-tokenizer and are copied beside the weights.
#pragma once

#include <QDir>
#include <QString>
#include <QTest>

#include "engine/model.h"
#include "engine/model_loader.h"
#include "support/tiny_tokenizer.h"

inline void writeTinyTextModel(const QString& dir, uint64_t seed, int context) {
  engine::ModelConfig c;
  c.arch = engine::Arch::GPT2;
  c.n_layer = 2;
  c.n_embd = 32;
  c.n_head = 2;
  c.n_kv_head = 2;
  c.vocab_size = 512;
  c.max_seq_len = context;
  c.ffn_dim = 128;
  engine::Model model(c);
  model.init_random(seed);
  const QString tokenizerDir = dir + QStringLiteral("-tokenizer");
  QVERIFY(QDir().mkpath(tokenizerDir));
  writeTinyTokenizer(tokenizerDir);
  engine::save_hf_directory(model, dir.toStdString(), tokenizerDir.toStdString(), "{}");
}
