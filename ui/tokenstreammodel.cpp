// TokenStreamModel: list model of generated tokens (see tokenstreammodel.h).
#include "tokenstreammodel.h"

#include <cmath>

TokenStreamModel::TokenStreamModel(QObject* parent) : QAbstractListModel(parent) {}

int TokenStreamModel::rowCount(const QModelIndex& parent) const {
  // A flat list: only the invisible root has children.
  return parent.isValid() ? 0 : count();
}

QVariant TokenStreamModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case TextRole: return r.text;
    case IdRole: return r.id;
    case ProbRole: return std::exp(r.logprob);
    case LogprobRole: return r.logprob;
    case AlternativesRole: return r.alternatives;
    default: return {};
  }
}

QHash<int, QByteArray> TokenStreamModel::roleNames() const {
  return {{TextRole, "text"}, {IdRole, "tokenId"}, {ProbRole, "prob"}, {LogprobRole, "logprob"},
          {AlternativesRole, "alternatives"}};
}

QString TokenStreamModel::text() const {
  QString out;
  for (const Row& r : m_rows) out += r.text;
  return out;
}

TokenStreamModel::Row TokenStreamModel::rowFromMap(const QVariantMap& map) {
  Row r;
  r.id = map.value(QStringLiteral("id"), -1).toInt();
  r.text = map.value(QStringLiteral("text")).toString();
  r.logprob = map.value(QStringLiteral("logprob")).toDouble();
  r.alternatives = map.value(QStringLiteral("alternatives")).toList();
  return r;
}

void TokenStreamModel::append(const QVariantList& tokens) {
  if (tokens.isEmpty()) return;
  const int first = count();
  beginInsertRows({}, first, first + static_cast<int>(tokens.size()) - 1);
  for (const QVariant& v : tokens) m_rows.push_back(rowFromMap(v.toMap()));
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
  const QVariantList alts = m_rows[static_cast<size_t>(row)].alternatives;
  if (altIndex < 0 || altIndex >= alts.size()) return false;
  truncate(row + 1);
  Row& r = m_rows[static_cast<size_t>(row)];
  const QVariantMap alt = alts[altIndex].toMap();
  r.id = alt.value(QStringLiteral("id")).toInt();
  r.text = alt.value(QStringLiteral("text")).toString();
  r.logprob = alt.value(QStringLiteral("logprob")).toDouble();
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
  const Row& r = m_rows[static_cast<size_t>(row)];
  return {{QStringLiteral("id"), r.id}, {QStringLiteral("text"), r.text}, {QStringLiteral("logprob"), r.logprob},
          {QStringLiteral("prob"), std::exp(r.logprob)}, {QStringLiteral("alternatives"), r.alternatives}};
}
