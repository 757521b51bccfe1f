// ModelInfo: conversion from the engine's model and the display strings built from it.
#include "modelinfo.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QVariantMap>

#include "engine/model.h"

namespace {

QString displayArchitecture(const std::string& engineName) {
  // The engine's names are identifiers ("gpt2"); people know the family by its written name.
  if (engineName == "gpt2") return QStringLiteral("GPT-2");
  return QString::fromStdString(engineName).toUpper();
}

// `warning` marks a value the user should notice (shown in the warning colour).
QVariantMap row(const QString& label, const QString& value, bool warning = false) {
  return {{QStringLiteral("label"), label}, {QStringLiteral("value"), value}, {QStringLiteral("warning"), warning}};
}

}  // namespace

QString ModelInfo::formatCount(qint64 n) {
  const QLocale locale = QLocale::system();
  if (n < 10'000) return locale.toString(n);
  if (n < 1'000'000) return locale.toString(n / 1e3, 'f', 1) + QStringLiteral(" K");
  if (n < 1'000'000'000) return locale.toString(n / 1e6, 'f', 1) + QStringLiteral(" M");
  return locale.toString(n / 1e9, 'f', 2) + QStringLiteral(" B");
}

QString ModelInfo::summary() const {
  if (!isValid()) return {};
  const QLocale locale = QLocale::system();
  return QStringLiteral("%1 · %2 parameters · %3 layers · context %4 · vocab %5")
      .arg(architecture, formatCount(parameterCount), QString::number(layers), locale.toString(contextLength),
           locale.toString(vocabSize));
}

QVariantList ModelInfo::details() const {
  if (!isValid()) return {};
  const QLocale locale = QLocale::system();
  QVariantList rows;
  rows << row(QObject::tr("Architecture"), architecture)
       << row(QObject::tr("Parameters"),
              QStringLiteral("%1 (%2)").arg(formatCount(parameterCount), locale.toString(parameterCount)))
       << row(QObject::tr("Weights"), weights.isEmpty() ? QStringLiteral("f32") : weights)
       << row(QObject::tr("Layers"), QString::number(layers))
       << row(QObject::tr("Embedding size"), QString::number(embeddingSize))
       << row(QObject::tr("Attention heads"), kvHeads > 0 && kvHeads != heads
                                                  ? QObject::tr("%1 (%2 key/value)").arg(heads).arg(kvHeads)
                                                  : QString::number(heads))
       << row(QObject::tr("Feed-forward size"), QString::number(ffnDim))
       << row(QObject::tr("Context length"), QObject::tr("%1 tokens").arg(locale.toString(contextLength)))
       << row(QObject::tr("Vocabulary"), QObject::tr("%1 tokens").arg(locale.toString(vocabSize)))
       << row(QObject::tr("Tokenizer"),
              hasTokenizer ? QObject::tr("included") : QObject::tr("missing — text generation is not possible"),
              !hasTokenizer)
       << row(QObject::tr("Chat template"), chatTemplate, !chatTemplateNote.isEmpty())
       << row(QObject::tr("Format"), format)
       << row(QObject::tr("Loaded in"),
              loadMilliseconds < 1000 ? QObject::tr("%1 ms").arg(loadMilliseconds)
                                      : QObject::tr("%1 s").arg(locale.toString(loadMilliseconds / 1000.0, 'f', 1)));
  return rows;
}

ModelInfo ModelInfo::fromModel(const engine::Model& model, const QString& path, const QString& format) {
  const engine::ModelConfig& c = model.config();
  ModelInfo info;
  info.path = path;
  const QFileInfo fi(path);
  info.name = fi.fileName().isEmpty() ? fi.absoluteDir().dirName() : fi.fileName();
  info.format = format;
  info.architecture = displayArchitecture(engine::arch_name(c.arch));
  info.source = QString::fromStdString(model.source);
  info.parameterCount = static_cast<qint64>(c.parameter_count());
  info.weights = QString::fromStdString(model.weight_summary());
  info.layers = c.n_layer;
  info.embeddingSize = c.n_embd;
  info.heads = c.n_head;
  info.kvHeads = c.n_kv_head;
  info.contextLength = c.max_seq_len;
  info.vocabSize = c.vocab_size;
  info.ffnDim = c.ffn_dim;
  info.hasTokenizer = model.tokenizer() != nullptr;
  info.chatTemplate = QString::fromStdString(model.chat_template().name());
  info.chatTemplateNote = QString::fromStdString(model.chat_template_note);
  return info;
}
