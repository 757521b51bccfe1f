// ServerRequestLog: a bounded, newest-first list model over the server's request entries.
#include "serverrequestlog.h"

#include <QDateTime>

namespace {

constexpr int kFlushMs = 1000;

}  // namespace

ServerRequestLog::ServerRequestLog(int capacity, QObject* parent)
    : QAbstractListModel(parent), m_capacity(qMax(1, capacity)) {
  m_flushTimer.setSingleShot(true);
  m_flushTimer.setInterval(kFlushMs);
  connect(&m_flushTimer, &QTimer::timeout, this, &ServerRequestLog::flush);
}

void ServerRequestLog::flush() {
  m_flushTimer.stop();
  if (!m_store || m_unsaved.isEmpty()) return;
  m_store->append(m_unsaved);  // a failed write is reported by the Database; the list goes on
  m_unsaved.clear();
}

void ServerRequestLog::setStore(ServerRequestStore* store) {
  flush();
  m_store = store;
  beginResetModel();
  m_rows.clear();
  if (m_store)
    for (const StoredServerRequest& r : m_store->newest(m_capacity)) m_rows.append(Row{r.whenMs, r.entry});
  endResetModel();
  Q_EMIT countChanged();
}

void ServerRequestLog::append(const QVariantMap& entry, qint64 whenMs) {
  if (m_store) {
    m_unsaved.append(StoredServerRequest{whenMs, entry});
    if (m_unsaved.size() > m_store->capacity()) m_unsaved.removeFirst();  // the store would drop it anyway
    if (!m_flushTimer.isActive()) m_flushTimer.start();
  }
  if (m_rows.size() >= m_capacity) {
    beginRemoveRows({}, int(m_rows.size()) - 1, int(m_rows.size()) - 1);
    m_rows.removeLast();
    endRemoveRows();
  }
  beginInsertRows({}, 0, 0);
  m_rows.prepend(Row{whenMs, entry});
  endInsertRows();
  Q_EMIT countChanged();
}

void ServerRequestLog::clear() {
  m_unsaved.clear();
  if (m_store) m_store->clear();
  if (m_rows.isEmpty()) return;
  beginResetModel();
  m_rows.clear();
  endResetModel();
  Q_EMIT countChanged();
}

QVariantMap ServerRequestLog::entryAt(int row) const {
  if (row < 0 || row >= m_rows.size()) return {};
  QVariantMap entry = m_rows[row].entry;
  entry.insert(QStringLiteral("time"), data(index(row), TimeRole));
  return entry;
}

int ServerRequestLog::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant ServerRequestLog::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = m_rows[index.row()];
  const QVariantMap& e = row.entry;
  switch (role) {
    case Qt::DisplayRole:
      return QStringLiteral("%1 %2 %3").arg(e.value(QStringLiteral("method")).toString(),
                                            e.value(QStringLiteral("path")).toString(),
                                            e.value(QStringLiteral("status")).toString());
    case TimeRole: return QDateTime::fromMSecsSinceEpoch(row.whenMs).toString(QStringLiteral("HH:mm:ss"));
    case MethodRole: return e.value(QStringLiteral("method")).toString();
    case PathRole: return e.value(QStringLiteral("path")).toString();
    case StatusRole: return e.value(QStringLiteral("status")).toInt();
    case PromptTokensRole: return e.value(QStringLiteral("promptTokens"), 0).toLongLong();
    case CompletionTokensRole: return e.value(QStringLiteral("completionTokens"), 0).toLongLong();
    case DurationMsRole: return e.value(QStringLiteral("ms"), 0.0).toDouble();
    case FirstTokenMsRole: return e.value(QStringLiteral("ttftMs"), -1.0).toDouble();
    default: return {};
  }
}

QHash<int, QByteArray> ServerRequestLog::roleNames() const {
  return {{TimeRole, "time"},
          {MethodRole, "method"},
          {PathRole, "path"},
          {StatusRole, "status"},
          {PromptTokensRole, "promptTokens"},
          {CompletionTokensRole, "completionTokens"},
          {DurationMsRole, "durationMs"},
          {FirstTokenMsRole, "firstTokenMs"}};
}
