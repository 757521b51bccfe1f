#include "processmemory.h"

#include <QFile>
#include <QList>

#include <unistd.h>

qint64 residentMemoryBytes() {
  // statm: "size resident shared text lib data dt", in pages.
  QFile statm(QStringLiteral("/proc/self/statm"));
  if (!statm.open(QIODevice::ReadOnly)) return -1;
  const QList<QByteArray> fields = statm.readAll().simplified().split(' ');
  if (fields.size() < 2) return -1;
  bool ok = false;
  const qint64 pages = fields[1].toLongLong(&ok);
  const long pageSize = sysconf(_SC_PAGESIZE);
  if (!ok || pages < 0 || pageSize <= 0) return -1;
  return pages * pageSize;
}
