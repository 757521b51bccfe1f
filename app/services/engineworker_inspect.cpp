// EngineWorker::inspect: runs engine::inspect_prompt on the worker thread (see engineworker.h).
// Kept apart from generation: the two share only the loaded model and backend.
#include <cmath>

#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "engineworker.h"

namespace {

// Attention is L*NH*T^2 floats: refuse sequences that would need more than this, before allocating.
constexpr double kMaxAttentionBytes = 2.0 * 1024 * 1024 * 1024;

}  // namespace

QString inspectionTokenLabel(const std::string& bytes) {
  const QString text = QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
  QString out;
  if (text.contains(QChar::ReplacementCharacter)) {
    for (unsigned char c : bytes)
      out += c < 0x80 ? QString(QChar(c)) : QStringLiteral("\\x%1").arg(c, 2, 16, QLatin1Char('0'));
  } else {
    out = text;
  }
  out.replace(QLatin1Char(' '), QChar(0x00B7))
      .replace(QLatin1Char('\n'), QChar(0x21B5))
      .replace(QLatin1Char('\t'), QChar(0x2192));
  return out;
}

void EngineWorker::inspect(const QString& text, const QList<int>& ids, quint64 requestId) {
  if (!m_model || !m_backend) {
    Q_EMIT inspectionFailed(requestId, tr("No model is loaded. Open one on the Models page."));
    return;
  }
  try {
    std::vector<int32_t> seq(ids.begin(), ids.end());
    if (seq.empty()) {
      const engine::Tokenizer* tokenizer = m_model->tokenizer();
      if (!tokenizer) {
        Q_EMIT inspectionFailed(requestId, tr("This model has no tokenizer, so it cannot read text."));
        return;
      }
      seq = tokenizer->encode(text.toStdString());
    }
    if (seq.empty()) {
      Q_EMIT inspectionFailed(requestId, tr("Type some text to inspect first."));
      return;
    }
    const engine::ModelConfig& c = m_model->config();
    const double bytes = 4.0 * c.n_layer * c.n_head * static_cast<double>(seq.size()) * static_cast<double>(seq.size());
    if (bytes > kMaxAttentionBytes) {
      const auto most = static_cast<int>(std::sqrt(kMaxAttentionBytes / (4.0 * c.n_layer * c.n_head)));
      Q_EMIT inspectionFailed(requestId, tr("%1 tokens are too many to inspect with this model (at most %2).")
                                             .arg(seq.size())
                                             .arg(most));
      return;
    }
    if (static_cast<int>(seq.size()) > c.max_seq_len) {
      Q_EMIT inspectionFailed(requestId,
                              tr("%1 tokens exceed the model's context of %2.").arg(seq.size()).arg(c.max_seq_len));
      return;
    }
    engine::InspectOptions options;
    options.top_k = 5;
    options.progress = [&](float fraction) {
      Q_EMIT inspectionProgress(requestId, static_cast<double>(fraction));
      return !m_inspectGate.isCancelled(requestId);
    };
    if (m_inspectGate.isCancelled(requestId)) throw engine::Cancelled();
    auto result = std::make_shared<engine::Inspection>(engine::inspect_prompt(*m_model, *m_backend, seq, options));
    Q_EMIT inspectionReady(requestId, InspectionPtr(std::move(result)));
  } catch (const engine::Cancelled&) {
    Q_EMIT inspectionFailed(requestId, tr("Inspection cancelled."));
  } catch (const std::bad_alloc&) {
    Q_EMIT inspectionFailed(requestId, tr("Not enough memory to inspect this text; try a shorter one."));
  } catch (const std::exception& e) {
    Q_EMIT inspectionFailed(requestId, tr("Inspection failed: %1").arg(QString::fromUtf8(e.what())));
  }
}

void EngineWorker::inspectChat(const QList<ChatTurn>& turns, const QString& continuation, quint64 requestId) {
  if (!m_model || !m_backend || !m_model->tokenizer()) {
    inspect(QString(), {}, requestId);  // says why, in the same words as the Inspect page
    return;
  }
  QList<int> ids;
  try {
    for (int32_t id : chatIds(turns, continuation)) ids << id;
  } catch (const std::exception& e) {
    Q_EMIT inspectionFailed(requestId, tr("Could not render the chat: %1").arg(QString::fromUtf8(e.what())));
    return;
  }
  if (ids.isEmpty()) {
    Q_EMIT inspectionFailed(requestId, tr("This message renders to no tokens."));
    return;
  }
  inspect(QString(), ids, requestId);
}
