// Which model to open at startup, and where the app's shipped data lives.
//
// Order: `--model PATH` (even if it does not exist: the user asked for it, so they get its error),
// else the last model if it still exists, else the built-in starter model, else none. When the chosen
// model fails to load, the starter model is opened instead (the error stays shown), so that a bad
// `--model` or a last model that went bad never leaves the app without a model.
#pragma once

#include <QString>

struct StartupModel {
  QString path;    // empty: open no model
  QString origin;  // why this one, for the status line: "command line", "last session", "starter model"
  QString fallback;  // opened when `path` fails to load: the starter model, unless `path` is it (or none)
};

// WB_DATA_DIR if set, else <dir of executable>/../share/llm-workbench (the build tree and an install
// both put the data there), else the compiled-in install location.
QString workbenchDataDir();

QString starterModelPath(const QString& dataDir);

StartupModel resolveStartupModel(const QString& commandLinePath, const QString& lastPath, const QString& dataDir);
