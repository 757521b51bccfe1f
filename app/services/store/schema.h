// The app database's schema, as the ordered list of steps that build it (PRAGMA user_version is the
// number of the last step applied). Database::open() applies the steps a file has not seen yet.
//
// Steps are append-only: a released step is never edited, renumbered or removed, because databases on
// users' disks were built by it. A new concern (next: preference pairs) adds its tables as a new step
// at the end of the list in schema.cpp and a store of its own beside chatstore.h and runstore.h.
#pragma once

#include <QList>
#include <QStringList>

struct SchemaStep {
  int version;
  const char* what;  // for the error when the step fails ("upgrading to schema 3 (...) failed")
  QStringList statements;
};

// Ordered by version, 1, 2, 3, ... without gaps.
const QList<SchemaStep>& schemaSteps();
