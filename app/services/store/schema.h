// The app database's schema, as the ordered list of steps that build it (PRAGMA user_version is the
// number of the last step applied). Database::open() applies the steps a file has not seen yet.
//
// Steps are append-only: a released step is never edited, renumbered or removed, because databases on
// users' disks were built by it.
//
// Where the next concern goes: its tables as the next step at the end of schema.cpp; its queries in a store of its own, store/<concern>store.{h,cpp}, a QObject over a
// `Database&` like RunStore (reads with Database::select, writes with Database::write or a
// Transaction); AppController creates it over its Database and hands it to the service that needs it.
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
