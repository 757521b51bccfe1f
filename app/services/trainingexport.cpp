// exportTrainedModel: see trainingexport.h.
#include "trainingexport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include "engine/error.h"
#include "engine/io/model_convert.h"

namespace {

QString sizeOf(const QString& path) {
  const QFileInfo fi(path);
  qint64 bytes = 0;
  if (fi.isDir()) {
    for (const QFileInfo& f : QDir(path).entryInfoList(QDir::Files)) bytes += f.size();
  } else {
    bytes = fi.size();
  }
  return QLocale::c().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat);
}

// The adapter directory copied file by file into a new directory (never into a user's full one).
void copyAdapter(const QString& from, const QString& to) {
  const QDir src(from);
  if (!QFileInfo::exists(src.filePath(QStringLiteral("adapter_model.safetensors"))))
    throw engine::Error(from.toStdString() +
                        ": no LoRA adapter here (only LoRA runs have one; a full fine-tuning "
                        "run exports as an HF directory or GGUF)");
  QDir dst(to);
  if (dst.exists() && !dst.isEmpty())
    throw engine::Error(to.toStdString() + ": the folder exists and is not empty; choose a new one");
  if (!QDir().mkpath(to)) throw engine::Error(to.toStdString() + ": cannot create the folder");
  for (const QFileInfo& f : src.entryInfoList(QDir::Files)) {
    const QString target = dst.filePath(f.fileName());
    if (!QFile::copy(f.absoluteFilePath(), target))
      throw engine::Error(target.toStdString() + ": cannot write the file");
  }
}

}  // namespace

QString exportTrainedModel(const QString& runDir, const QString& kind, const QString& destination,
                           const QString& ggufType, const std::function<bool(double)>& progress) {
  if (destination.isEmpty()) throw engine::Error("choose where to save the export");
  if (!QFileInfo::exists(QDir(runDir).filePath(QStringLiteral("config.json"))))
    throw engine::Error(runDir.toStdString() + ": no trained model here (has the run finished?)");
  if (kind == QLatin1String("adapter")) {
    copyAdapter(QDir(runDir).filePath(QStringLiteral("adapter")), destination);
    if (progress) progress(1.0);
    return QStringLiteral("LoRA adapter (PEFT), %1").arg(sizeOf(destination));
  }
  // The folder the export goes into may be new (a name typed after a chosen folder).
  if (!QDir().mkpath(QFileInfo(destination).absolutePath()))
    throw engine::Error(QFileInfo(destination).absolutePath().toStdString() + ": cannot create the folder");
  engine::io::ConvertOptions o;
  if (kind == QLatin1String("hf")) {
    o.target = engine::io::ConvertTarget::Hf;
  } else if (kind == QLatin1String("gguf")) {
    o.target = engine::io::ConvertTarget::Gguf;
    const auto type = engine::io::parse_export_type(ggufType.toStdString());
    if (!type)
      throw engine::Error("unknown GGUF type '" + ggufType.toStdString() +
                          "' (f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q5_K)");
    o.type = *type;
  } else {
    throw engine::Error("unknown export kind '" + kind.toStdString() + "' (hf, adapter or gguf)");
  }
  o.provenance_json =
      QJsonDocument(QJsonObject{{QStringLiteral("created_by"), QStringLiteral("LLM Workbench fine-tuning wizard")},
                                {QStringLiteral("exported_from"), runDir}})
          .toJson()
          .toStdString();
  // convert_model's progress cannot stop it; a stop request is honoured between its stages by
  // throwing, which leaves nothing at the destination (it writes atomically).
  const engine::io::ConvertReport r =
      engine::io::convert_model(runDir.toStdString(), destination.toStdString(), o, [&](float f, const std::string&) {
        if (progress && !progress(double(f))) throw engine::Error("export stopped");
      });
  QString what = o.target == engine::io::ConvertTarget::Gguf
                     ? QStringLiteral("GGUF %1, %2")
                           .arg(QString::fromStdString(engine::io::export_type_name(o.type)), sizeOf(destination))
                     : QStringLiteral("HF directory, %1").arg(sizeOf(destination));
  if (!r.warning.empty()) what += QStringLiteral(" (%1)").arg(QString::fromStdString(r.warning));
  return what;
}
