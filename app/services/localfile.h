// Files the user picks: QML's dialogs hand over file: URLs, C++ and tests plain paths; exports and
// snapshots are written atomically (QSaveFile: a crash or a full disk never leaves half a file).
#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QSaveFile>
#include <QString>
#include <QUrl>

inline QString localPathOf(const QString& pathOrUrl) {
  const QUrl url(pathOrUrl);
  return url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
}

// Writes `bytes` to the file `pathOrUrl` names; returns "" or a sentence saying why it failed.
inline QString writeFileAtomically(const QString& pathOrUrl, const QByteArray& bytes) {
  const QString path = localPathOf(pathOrUrl);
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
    return QCoreApplication::translate("localfile", "Could not write %1: %2").arg(path, f.errorString());
  return {};
}
