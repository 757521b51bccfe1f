// TokenStreamModel: the generated tokens of one output, for the Playground's token view and the
// inspector. GUI thread only: records arrive in batches from AppController::tokensArrived and are
// appended with one beginInsertRows per batch, so a fast model costs one view update per frame.
//
// Each row is one token: text (its piece, complete UTF-8), id, logprob, prob = exp(logprob) and
// alternatives ([{id, text, logprob, prob}], most likely first).
#pragma once

#include <QAbstractListModel>
#include <QVariantList>
#include <QtQml/qqml.h>

#include <vector>

class TokenStreamModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(QString text READ text NOTIFY countChanged)

 public:
  enum Role { TextRole = Qt::UserRole + 1, IdRole, ProbRole, LogprobRole, AlternativesRole };

  explicit TokenStreamModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  int count() const { return static_cast<int>(m_rows.size()); }
  QString text() const;

  // Each entry a map with id, text, logprob and optionally alternatives (as tokensArrived sends).
  Q_INVOKABLE void append(const QVariantList& tokens);
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

 private:
  struct Row {
    int id = -1;
    QString text;
    double logprob = 0;
    QVariantList alternatives;
  };
  static Row rowFromMap(const QVariantMap& map);
  std::vector<Row> m_rows;
};
