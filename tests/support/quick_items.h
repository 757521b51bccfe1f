// Finding Qt Quick items in tests by objectName.
#pragma once

#include <QQuickItem>
#include <QString>

// Depth-first over the visual tree: views (ListView, Repeater) parent their delegates visually only,
// so QObject::findChild misses them.
inline QQuickItem* findItem(QQuickItem* root, const QString& objectName) {
  if (root->objectName() == objectName) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, objectName)) return found;
  return nullptr;
}
