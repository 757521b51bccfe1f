// AppController's side of the Inspect page (see appcontroller.h): requests go to the worker queued;
// results and progress come back queued, and only the newest request's answers are kept.
#include "appcontroller.h"

#include <QFile>

#include "engine/error.h"
#include "engine/inspect/snapshot.h"
#include "engineworker.h"
#include "localfile.h"
#include "store/chatstore.h"

namespace {

constexpr qint64 kMaxSnapshotBytes = qint64(4) << 30;

}  // namespace

void AppController::connectInspection() {
  connect(this, &AppController::inspectRequested, m_worker, &EngineWorker::inspect, Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::inspectionProgress, this,
      [this](quint64 id, double fraction) {
        if (id != m_inspectRequest) return;
        m_inspectProgress = fraction;
        Q_EMIT inspectingChanged();
      },
      Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::inspectionReady, this,
      [this](quint64 id, const InspectionPtr& inspection) {
        if (id != m_inspectRequest) return;
        m_inspectRequest = 0;
        if (m_inspectMessageId != 0 && inspection) {
          // Saved with its message, so the next Inspect on it opens at once without the model.
          const std::string blob = engine::serialize_inspection(*inspection);
          m_chat->storeInspection(m_inspectMessageId, QByteArray(blob.data(), static_cast<qsizetype>(blob.size())),
                                  m_model.name, inspection->T);
          m_inspectMessageId = 0;
        }
        m_inspection = QVariant::fromValue(inspection);
        m_inspectError.clear();
        Q_EMIT inspectionChanged();
        Q_EMIT inspectingChanged();
      },
      Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::inspectionFailed, this,
      [this](quint64 id, const QString& message) {
        if (id != m_inspectRequest) return;
        m_inspectRequest = 0;
        m_inspectMessageId = 0;
        m_inspectError = message;
        Q_EMIT inspectingChanged();
      },
      Qt::QueuedConnection);
}

void AppController::requestInspection(const QString& text, const QList<int>& ids) {
  if (m_shutDown) return;
  m_worker->requestCancelInspect();  // the newest request wins
  m_inspectRequest = m_worker->issueInspectTicket();
  m_inspectMessageId = 0;
  m_inspectSource.clear();
  m_inspectProgress = 0;
  m_inspectError.clear();
  Q_EMIT inspectingChanged();
  Q_EMIT inspectRequested(text, ids, m_inspectRequest);
}

void AppController::inspectText(const QString& text) { requestInspection(text, {}); }

void AppController::inspectIds(const QVariantList& ids) { requestInspection(QString(), tokenIdsFrom(ids)); }

void AppController::cancelInspect() {
  if (m_inspectRequest == 0) return;
  m_worker->requestCancelInspect();
}

QString AppController::saveInspection(const QString& pathOrUrl) const {
  const InspectionPtr in = inspectionFrom(m_inspection);
  if (!in) return tr("Nothing to save yet: inspect some text first.");
  const std::string blob = engine::serialize_inspection(*in);
  return writeFileAtomically(pathOrUrl, QByteArray(blob.data(), static_cast<qsizetype>(blob.size())));
}

QString AppController::openInspection(const QString& pathOrUrl) {
  const QString path = localPathOf(pathOrUrl);
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return tr("Could not open %1: %2").arg(path, f.errorString());
  if (f.size() > kMaxSnapshotBytes) return tr("%1 is too large to be an inspection snapshot.").arg(path);
  m_inspectSource.clear();
  return showInspectionBytes(f.readAll(), path);
}

QString AppController::showInspectionBytes(const QByteArray& bytes, const QString& source) {
  try {
    auto in = std::make_shared<engine::Inspection>(
        engine::deserialize_inspection(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())),
                                       source.toStdString()));
    m_inspection = QVariant::fromValue(InspectionPtr(std::move(in)));
  } catch (const engine::Error& e) {
    return QString::fromUtf8(e.what());
  } catch (const std::bad_alloc&) {
    return tr("Not enough memory to open %1.").arg(source);
  }
  m_inspectError.clear();
  Q_EMIT inspectionChanged();
  Q_EMIT inspectingChanged();
  return {};
}

namespace {

// "the chat up to “Show me your…”": names the message by the start of its text.
QString chatSource(const StoredMessage& m, bool saved) {
  QString text = m.content.simplified();
  if (text.size() > 48) text = text.left(47) + QChar(0x2026);
  return saved ? AppController::tr("The chat up to “%1” (saved with the message)").arg(text)
               : AppController::tr("The chat up to “%1”, as the model reads it").arg(text);
}

}  // namespace

void AppController::connectChatInspection() {
  connect(this, &AppController::inspectChatRequested, m_worker, &EngineWorker::inspectChat, Qt::QueuedConnection);
  connect(m_chat, &ChatController::inspectionStored, this, [this](qint64 messageId, const QByteArray& blob) {
    if (m_inspectRequest != 0) m_worker->requestCancelInspect();  // the saved one is the newest request
    m_inspectRequest = 0;
    m_inspectMessageId = 0;
    // A damaged snapshot is refused with deserialize's reason; the app and the chat carry on.
    const QString previous = m_inspectSource;
    m_inspectSource = chatSource(m_chat->store()->message(messageId), true);
    const QString error = showInspectionBytes(blob, tr("the inspection saved with message %1").arg(messageId));
    if (!error.isEmpty()) {
      m_inspectSource = previous;  // still what is shown
      m_inspectError = error;
      Q_EMIT inspectingChanged();
    }
  });
  connect(m_chat, &ChatController::inspectRequested, this,
          [this](qint64 messageId, const QList<ChatTurn>& turns, const QString& continuation) {
            if (m_shutDown) return;
            m_worker->requestCancelInspect();  // the newest request wins
            m_inspectRequest = m_worker->issueInspectTicket();
            m_inspectMessageId = messageId;
            m_inspectSource = chatSource(m_chat->store()->message(messageId), false);
            m_inspectProgress = 0;
            m_inspectError.clear();
            Q_EMIT inspectingChanged();
            Q_EMIT inspectChatRequested(turns, continuation, m_inspectRequest);
          });
}
