// ModelInfo: what the GUI may know about the loaded model, copied out of the engine on the worker
// thread so that no engine object ever crosses to the GUI thread.
#pragma once

#include <QMetaType>
#include <QString>
#include <QVariantList>

namespace engine {
class Model;
}

struct ModelInfo {
  QString path;          // what the user opened (directory or file)
  QString name;          // short display name (directory or file name)
  QString format;        // "Hugging Face safetensors", "llm.c checkpoint"
  QString architecture;  // "GPT-2"
  QString source;        // the engine's own description of where it came from
  QString weights;       // how the linear weights are stored: "f32", "q4_0 (mixed: q6_K wte)"
  qint64 parameterCount = 0;
  int layers = 0;
  int embeddingSize = 0;
  int heads = 0;
  int kvHeads = 0;
  int contextLength = 0;
  int vocabSize = 0;
  int ffnDim = 0;
  bool hasTokenizer = false;
  QString chatTemplate;      // the template's family name: "chatml", "llama3", ..., "plain"
  QString chatTemplateNote;  // why the model's own template is not used; empty when it is (or has none)
  qint64 loadMilliseconds = 0;

  bool isValid() const { return !path.isEmpty(); }

  // One line for the status bar: "GPT-2 · 1.2 M parameters · 4 layers · context 256 · vocab 50,257".
  QString summary() const;
  // Label/value rows for a details table, as QVariantMaps {label, value, warning} that QML reads directly.
  QVariantList details() const;

  static ModelInfo fromModel(const engine::Model& model, const QString& path, const QString& format);
  // 124439808 -> "124.4 M"; small counts stay exact.
  static QString formatCount(qint64 n);
};

Q_DECLARE_METATYPE(ModelInfo)
