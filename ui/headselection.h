// HeadSelection: the heads picked in the Inspect page's head grid, for overlaying their attention in
// one heatmap. Clicks work as in a file manager's grid: a plain click picks one head, Ctrl toggles
// one, Shift picks the rectangle of layers x heads from the last plain or Ctrl click (the anchor) to
// the clicked head, and Ctrl+Shift adds that rectangle to what is picked.
//
// `heads` is sorted by layer, then head, as [{layer, head}, ...] (what AttentionHeatmap.overlayHeads
// takes); `summary` names them for the legend ("L0 H1, L2 H3").
#pragma once

#include <QObject>
#include <QString>
#include <QVariantList>
#include <QtQml/qqml.h>

#include <optional>
#include <set>

#include "engine/inspect/inspect.h"

class HeadSelection : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QVariantList heads READ heads NOTIFY changed)
  Q_PROPERTY(int count READ count NOTIFY changed)
  Q_PROPERTY(QString summary READ summary NOTIFY changed)

 public:
  explicit HeadSelection(QObject* parent = nullptr) : QObject(parent) {}

  QVariantList heads() const;
  int count() const { return static_cast<int>(m_picked.size()); }
  QString summary() const;
  const std::set<engine::HeadRef>& picked() const { return m_picked; }

  // A click on (layer, head) with the keyboard modifiers held (Qt::KeyboardModifiers as an int, as a
  // QML MouseEvent's `modifiers` gives them).
  Q_INVOKABLE void click(int layer, int head, int modifiers = 0);
  Q_INVOKABLE bool isSelected(int layer, int head) const { return m_picked.count({layer, head}) > 0; }
  Q_INVOKABLE void clear();

 Q_SIGNALS:
  void changed();

 private:
  void setPicked(std::set<engine::HeadRef> picked);

  std::set<engine::HeadRef> m_picked;
  std::optional<engine::HeadRef> m_anchor;
};
