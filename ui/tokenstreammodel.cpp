// TokenStreamModel: list model of generated tokens (see tokenstreammodel.h).
#include "tokenstreammodel.h"

#include <cmath>

#include "services/appcontroller.h"

namespace {

QVariantMap alternativeMap(const TokenAlternative& a) {
  return {{QStringLiteral("id"), a.id},
          {QStringLiteral("text"), a.text},
          {QStringLiteral("logprob"), a.logprob},
          {QStringLiteral("prob"), std::exp(a.logprob)}};
}

// What a delegate binds to: [{id, text, logprob, prob}], most likely first.
QVariantList alternativesList(const TokenRecord& r) {
  QVariantList out;
  out.reserve(r.alternatives.size());
  for (const TokenAlternative& a : r.alternatives) out << alternativeMap(a);
  return out;
}

}  // namespace

TokenStreamModel::TokenStreamModel(QObject* parent) : QAbstractListModel(parent) {}

int TokenStreamModel::rowCount(const QModelIndex& parent) const {
  // A flat list: only the invisible root has children.
  return parent.isValid() ? 0 : count();
}

QVariant TokenStreamModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const TokenRecord& r = m_rows[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case TextRole: return r.text;
    case IdRole: return r.id;
    case ProbRole: return std::exp(r.logprob);
    case LogprobRole: return r.logprob;
    case AlternativesRole: return alternativesList(r);
    default: return {};
  }
}

QHash<int, QByteArray> TokenStreamModel::roleNames() const {
  return {{TextRole, "text"},
          {IdRole, "tokenId"},
          {ProbRole, "prob"},
          {LogprobRole, "logprob"},
          {AlternativesRole, "alternatives"}};
}

QString TokenStreamModel::text() const {
  QString out;
  for (const TokenRecord& r : m_rows) out += r.text;
  return out;
}

void TokenStreamModel::setSource(AppController* source) {
  if (source == m_source) return;
  disconnect(m_connection);
  m_source = source;
  if (source) m_connection = connect(source, &AppController::tokensArrived, this, &TokenStreamModel::takeBatch);
  Q_EMIT sourceChanged();
}

void TokenStreamModel::setLane(const QString& lane) {
  if (lane == m_lane) return;
  m_lane = lane;
  Q_EMIT laneChanged();
}

void TokenStreamModel::takeBatch(const QString& lane, const QList<TokenRecord>& tokens) {
  if (lane == m_lane) append(tokens);
}

void TokenStreamModel::append(const QList<TokenRecord>& tokens) {
  if (tokens.isEmpty()) return;
  const int first = count();
  beginInsertRows({}, first, first + static_cast<int>(tokens.size()) - 1);
  m_rows.insert(m_rows.end(), tokens.begin(), tokens.end());
  endInsertRows();
  Q_EMIT countChanged();
}

void TokenStreamModel::clear() {
  if (m_rows.empty()) return;
  beginResetModel();
  m_rows.clear();
  endResetModel();
  Q_EMIT countChanged();
}

void TokenStreamModel::truncate(int n) {
  n = qMax(0, n);
  if (n >= count()) return;
  beginRemoveRows({}, n, count() - 1);
  m_rows.resize(static_cast<size_t>(n));
  endRemoveRows();
  Q_EMIT countChanged();
}

bool TokenStreamModel::forceAlternative(int row, int altIndex) {
  if (row < 0 || row >= count()) return false;
  const QList<TokenAlternative> alts = m_rows[static_cast<size_t>(row)].alternatives;
  if (altIndex < 0 || altIndex >= alts.size()) return false;
  truncate(row + 1);
  TokenRecord& r = m_rows[static_cast<size_t>(row)];
  const TokenAlternative& alt = alts[altIndex];
  r.id = alt.id;
  r.text = alt.text;
  r.logprob = alt.logprob;
  // The alternatives stay: they are what the model saw at this position, the choice among them.
  const QModelIndex i = index(row);
  Q_EMIT dataChanged(i, i);
  Q_EMIT countChanged();  // text changed
  return true;
}

QVariantList TokenStreamModel::ids(int n) const {
  if (n < 0 || n > count()) n = count();
  QVariantList out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) out << m_rows[static_cast<size_t>(i)].id;
  return out;
}

QVariantMap TokenStreamModel::get(int row) const {
  if (row < 0 || row >= count()) return {};
  const TokenRecord& r = m_rows[static_cast<size_t>(row)];
  return {{QStringLiteral("id"), r.id},
          {QStringLiteral("text"), r.text},
          {QStringLiteral("logprob"), r.logprob},
          {QStringLiteral("prob"), std::exp(r.logprob)},
          {QStringLiteral("alternatives"), alternativesList(r)}};
}
