// The memory this process holds right now, for the training dashboard's Memory figure.
//
// Resident set size (pages in RAM), read from /proc/self/statm: what the machine actually gives the
// app, including the model's mapped file pages, which is what decides whether a run fits. Linux only;
// elsewhere (or if /proc cannot be read) it returns -1 and the dashboard shows "—".
#pragma once

#include <QtGlobal>

qint64 residentMemoryBytes();
