// Shared test helper: the engine::Error message a call throws.
#pragma once

#include <QString>

#include <exception>

#include "engine/error.h"

// The engine::Error message thrown by f, "" if it returned, or a marker for any other exception
// (which is itself a failure: only engine::Error may leave the engine).
template <class F>
QString error_of(F&& f) {
  try {
    f();
  } catch (const engine::Error& e) {
    return QString::fromStdString(e.what());
  } catch (const std::exception& e) {
    return QStringLiteral("<non-engine exception: %1>").arg(e.what());
  }
  return QString();
}
