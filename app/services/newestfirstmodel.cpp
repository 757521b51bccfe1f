// NewestFirstModel: a sort by source row, descending.
#include "newestfirstmodel.h"

NewestFirstModel::NewestFirstModel(QAbstractItemModel* source, QObject* parent) : QSortFilterProxyModel(parent) {
  setSourceModel(source);
  // A role no row has: a change of text is then never taken for a change of order (the order is
  // the rows', never their data; see lessThan).
  setSortRole(Qt::UserRole);
  sort(0, Qt::AscendingOrder);
}

bool NewestFirstModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  return left.row() > right.row();
}
