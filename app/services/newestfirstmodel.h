// NewestFirstModel: the rows of a list model in reverse order (the last row first), every role and
// change passed through. The chat view lays its messages out from the bottom up
// (ListView.BottomToTop), so the newest message must be row 0: the view then keeps the newest
// message where it is while older ones above it are created, measured and grow, and needs no
// "scroll to the end" of its own while a reply streams in.
#pragma once

#include <QSortFilterProxyModel>

class NewestFirstModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit NewestFirstModel(QAbstractItemModel* source, QObject* parent = nullptr);

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};
