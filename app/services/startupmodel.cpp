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
  const QString starter = starterModelPath(dataDir);
  const bool haveStarter = QFileInfo::exists(starter);
  auto withFallback = [&](const QString& path, const QString& origin) {
    const bool isStarter = QDir::cleanPath(QFileInfo(path).absoluteFilePath()) == starter;
    return StartupModel{path, origin, haveStarter && !isStarter ? starter : QString()};
  };
  if (!commandLinePath.isEmpty())
    return withFallback(QFileInfo(commandLinePath).absoluteFilePath(), QObject::tr("command line"));
  if (!lastPath.isEmpty() && QFileInfo::exists(lastPath)) return withFallback(lastPath, QObject::tr("last session"));
  if (haveStarter) return {starter, QObject::tr("starter model"), {}};
  return {};
}
