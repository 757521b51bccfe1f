// Shared set-up of the Qt Quick Test runners: a throwaway session database, data folder in `dir` and
// cleared test-mode settings,
// software rendering under the offscreen platform, and the app's Material style.
#pragma once

#include <QGuiApplication>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

inline void prepareQuickTestEnvironment(const QTemporaryDir& dir) {
  QStandardPaths::setTestModeEnabled(true);  // QSettings then lives under ~/.qttest, not the user's
  QSettings().clear();
  qputenv("WB_SESSION_DB", dir.filePath(QStringLiteral("sessions.db")).toUtf8());
  qputenv("WB_DATA_DIR", dir.filePath(QStringLiteral("share")).toUtf8());
  if (QGuiApplication::platformName() == QLatin1String("offscreen"))
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QQuickStyle::setStyle(QStringLiteral("Material"));
}
