// TokenStreamModel: the generated tokens of one output, for the Playground's token view and the
// inspector. GUI thread only. With `source` (the App) and `lane` set, it takes in the records of
// AppController::tokensArrived for that lane, typed, in the worker's batches: one beginInsertRows per
// batch, so a fast model costs one view update per frame.
//
// Each row is one token: text (its piece, complete UTF-8), id, logprob, prob = exp(logprob) and
// alternatives ([{id, text, logprob, prob}], most likely first).
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QPointer>
#include <QVariantList>
#include <QtQml/qqml.h>

#include <vector>

#include "services/generationtypes.h"

class AppController;

class TokenStreamModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_MOC_INCLUDE("services/appcontroller.h")
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(QString text READ text NOTIFY countChanged)
  // Where the records come from, and which of its lanes ("A", "B", ...) this model shows.
  Q_PROPERTY(AppController* source READ source WRITE setSource NOTIFY sourceChanged)
  Q_PROPERTY(QString lane READ lane WRITE setLane NOTIFY laneChanged)

 public:
  enum Role { TextRole = Qt::UserRole + 1, IdRole, ProbRole, LogprobRole, AlternativesRole };

  explicit TokenStreamModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  int count() const { return static_cast<int>(m_rows.size()); }
  QString text() const;
  AppController* source() const { return m_source; }
  void setSource(AppController* source);
  QString lane() const { return m_lane; }
  void setLane(const QString& lane);

  // One batch of generated tokens, as the worker made them.
  void append(const QList<TokenRecord>& tokens);
  Q_INVOKABLE void clear();
  // Keeps the first `n` tokens.
  Q_INVOKABLE void truncate(int n);
  // The token at `row` replaced by its alternative `altIndex` and everything after it dropped:
  // what "force this alternative" shows before the continuation streams in. Returns false for an
  // invalid row or alternative.
  Q_INVOKABLE bool forceAlternative(int row, int altIndex);
  // Ids of the first `n` tokens (the forced prefix for AppController::continueWith).
  Q_INVOKABLE QVariantList ids(int n = -1) const;
  Q_INVOKABLE QVariantMap get(int row) const;

 Q_SIGNALS:
  void countChanged();
  void sourceChanged();
  void laneChanged();

 private:
  void takeBatch(const QString& lane, const QList<TokenRecord>& tokens);

  std::vector<TokenRecord> m_rows;
  QPointer<AppController> m_source;
  QMetaObject::Connection m_connection;
  QString m_lane;
};
