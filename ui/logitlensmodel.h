// LogitLensModel: the logit lens as a table, layers down (the model's output on top, the embeddings at
// the bottom, as the stream flows upward) and positions across. Each cell: what the model would
// predict next if it stopped after that layer.
//
// Roles: display (the top token's label), prob (its probability), colour (prob in the shared scale),
// textColour (readable on that colour), tokenId, alternatives ("token  41.2%" lines, top-k), correct
// (the top token is the actual next token of the sequence), layerName ("embed", "1".."L"), position.
// Header: vertical = layer names, horizontal = the token at each position.
#pragma once

#include <QAbstractTableModel>
#include <QVariant>
#include <QtQml/qqml.h>

#include "services/inspectiontypes.h"

class LogitLensModel : public QAbstractTableModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QVariant inspection READ inspection WRITE setInspection NOTIFY inspectionChanged)
  Q_PROPERTY(int layers READ layers NOTIFY inspectionChanged)
  Q_PROPERTY(int positions READ positions NOTIFY inspectionChanged)

 public:
  enum Role {
    ProbRole = Qt::UserRole + 1,
    ColourRole,
    TextColourRole,
    TokenIdRole,
    AlternativesRole,
    CorrectRole,
    LayerNameRole,
    PositionRole
  };

  explicit LogitLensModel(QObject* parent = nullptr);

  QVariant inspection() const { return m_inspection; }
  void setInspection(const QVariant& v);
  int layers() const { return m_in ? m_in->lens_rows : 0; }
  int positions() const { return m_in ? m_in->T : 0; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  // The lens row shown at table row `row` (row 0 = the output).
  int lensRow(int row) const { return layers() - 1 - row; }
  Q_INVOKABLE QString layerName(int row) const;
  // Writes the table as CSV (layer, position, token, rank, id, text, prob for every top-k entry).
  // Returns "" or why it failed.
  Q_INVOKABLE QString exportCsv(const QString& pathOrUrl) const;

 Q_SIGNALS:
  void inspectionChanged();

 private:
  QVariant m_inspection;
  InspectionPtr m_in;
};
