// How an engine::Inspection travels from the worker thread to the views: a shared pointer to an
// immutable result (attention can be ~100 MB, so it is never copied), wrapped in a QVariant for QML
// bindings (`inspection: App.inspection`); view models unwrap it with inspectionFrom().
#pragma once

#include <QMetaType>
#include <QVariant>

#include <memory>

#include "engine/inspect/inspect.h"

using InspectionPtr = std::shared_ptr<const engine::Inspection>;
Q_DECLARE_METATYPE(InspectionPtr)

// The inspection inside `v`, or null when it holds none.
inline InspectionPtr inspectionFrom(const QVariant& v) {
  return v.canConvert<InspectionPtr>() ? v.value<InspectionPtr>() : InspectionPtr();
}

// Token bytes as a label: invalid UTF-8 (a token cut mid-character) as \xNN escapes, and the
// whitespace a label would hide made visible (space ·, newline ↵, tab →).
QString inspectionTokenLabel(const std::string& bytes);
