// Fixtures of the training-job tests (app and UI): a tiny GPT-2 with the real GPT-2 tokenizer (2
// layers, 64 wide, context 64) written as an HF directory, and a small repetitive English text that
// any model that learns at all gets better at within a few steps.
#pragma once

#include <QDir>
#include <QFile>
#include <QString>

#include "engine/model.h"
#include "engine/model_loader.h"

// Writes the model into `dir` (WB_TEST_DATA_DIR locates the shipped tokenizer).
inline void writeTinyGpt2WithTokenizer(const QString& dir) {
  engine::ModelConfig c;
  c.arch = engine::Arch::GPT2;
  c.n_layer = 2, c.n_embd = 64, c.n_head = 4, c.n_kv_head = 4, c.ffn_dim = 256, c.vocab_size = 50257,
  c.max_seq_len = 64;
  engine::Model model(c);
  model.init_random(3);
  engine::save_hf_directory(model, dir.toStdString(),
                            QStringLiteral(WB_TEST_DATA_DIR "/../../resources/tokenizers/gpt2").toStdString(), "{}");
}

// `sentences` short sentences about four names and four things; returns false when it cannot write.
inline bool writeStories(const QString& path, int sentences) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  const char* names[] = {"Tom", "Ana", "Lily", "Max"};
  const char* things[] = {"ball", "cat", "tree", "boat"};
  for (int i = 0; i < sentences; ++i)
    f.write(QStringLiteral("%1 saw a %2. The %2 was big. ")
                .arg(QLatin1String(names[i % 4]), QLatin1String(things[(i / 4) % 4]))
                .toUtf8());
  return f.flush();
}
