// HeadSelection (see headselection.h).
#include "headselection.h"

#include <algorithm>

QVariantList HeadSelection::heads() const {
  QVariantList out;
  for (const engine::HeadRef& r : m_picked) out << QVariantMap{{"layer", r.layer}, {"head", r.head}};
  return out;
}

QString HeadSelection::summary() const {
  QStringList names;
  for (const engine::HeadRef& r : m_picked) names << tr("L%1 H%2").arg(r.layer).arg(r.head);
  return names.join(QStringLiteral(", "));
}

void HeadSelection::click(int layer, int head, int modifiers) {
  const engine::HeadRef at{layer, head};
  const bool ctrl = modifiers & Qt::ControlModifier, shift = modifiers & Qt::ShiftModifier;
  if (shift && m_anchor) {
    std::set<engine::HeadRef> picked = ctrl ? m_picked : std::set<engine::HeadRef>{};
    for (int l = std::min(layer, m_anchor->layer); l <= std::max(layer, m_anchor->layer); ++l)
      for (int h = std::min(head, m_anchor->head); h <= std::max(head, m_anchor->head); ++h) picked.insert({l, h});
    setPicked(std::move(picked));  // the anchor stays, so the next Shift-click reshapes the rectangle
    return;
  }
  m_anchor = at;
  std::set<engine::HeadRef> picked = ctrl ? m_picked : std::set<engine::HeadRef>{};
  if (ctrl && picked.count(at)) picked.erase(at);
  else picked.insert(at);
  setPicked(std::move(picked));
}

void HeadSelection::clear() {
  m_anchor.reset();
  setPicked({});
}

void HeadSelection::setPicked(std::set<engine::HeadRef> picked) {
  if (picked == m_picked) return;
  m_picked = std::move(picked);
  Q_EMIT changed();
}
