// A logit-bias text (the sampling popup's "id:ban" lines) that bans every token a model ends a reply
// with: its tokenizer's end-of-text token and the chat templates' end-of-turn tokens it has. Tests
// that need a reply still running when they act (stop, kill, a full context) use it with the
// starter model, which otherwise answers in a sentence.
#pragma once

#include <QString>
#include <QStringList>

#include "engine/model_loader.h"
#include "engine/tokenizer.h"

inline QString replyEndBan(const QString& modelPath) {
  const auto tokenizer = engine::load_model_tokenizer(modelPath.toStdString());
  QStringList lines;
  auto ban = [&](int32_t id) {
    const QString line = QStringLiteral("%1:ban").arg(id);
    if (!lines.contains(line)) lines << line;
  };
  if (auto eos = tokenizer->eos_id()) ban(*eos);
  for (const char* piece : {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "</s>"})
    if (auto id = tokenizer->token_id(piece)) ban(*id);
  return lines.join(QLatin1Char('\n'));
}
