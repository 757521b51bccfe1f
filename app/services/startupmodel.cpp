// Startup model resolution.
#include "startupmodel.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QObject>

QString workbenchDataDir() {
  const QString fromEnv = qEnvironmentVariable("WB_DATA_DIR");
  if (!fromEnv.isEmpty()) return QDir::cleanPath(fromEnv);
  const QString besideBinary =
      QDir::cleanPath(QCoreApplication::applicationDirPath() + QStringLiteral("/../share/llm-workbench"));
  if (QFileInfo::exists(besideBinary)) return besideBinary;
#ifdef WB_INSTALL_DATADIR
  return QStringLiteral(WB_INSTALL_DATADIR);
#else
  return besideBinary;
#endif
}

QString starterModelPath(const QString& dataDir) {
  return QDir::cleanPath(dataDir + QStringLiteral("/models/starter"));
}

StartupModel resolveStartupModel(const QString& commandLinePath, const QString& lastPath, const QString& dataDir) {
  if (!commandLinePath.isEmpty()) return {QFileInfo(commandLinePath).absoluteFilePath(), QObject::tr("command line")};
  if (!lastPath.isEmpty() && QFileInfo::exists(lastPath)) return {lastPath, QObject::tr("last session")};
  const QString starter = starterModelPath(dataDir);
  if (QFileInfo::exists(starter)) return {starter, QObject::tr("starter model")};
  return {};
}
