// The end-of-reply ban (app/services/logitbias.h) for the model at a path: tests that need a reply
// still running when they act (stop, kill, a full context) use it with the starter model.
#pragma once

#include <QString>

#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "services/logitbias.h"

inline QString replyEndBan(const QString& modelPath) {
  return endOfReplyBan(*engine::load_model_tokenizer(modelPath.toStdString()));
}
