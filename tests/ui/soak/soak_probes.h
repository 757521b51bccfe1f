// Probes of the UI soak test (tests/ui/test_ui_soak.cpp): what watches the app while the walk runs.
// The action log, the GUI-thread heartbeat with its watchdog and memory samples, and the database
// checks read through a connection of their own.
#pragma once

#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "services/processmemory.h"

qint64 nowMs();

// One read of the database through a connection of its own (WAL lets it in while the app writes).
QStringList sqlRows(const QString& path, const QString& sql, QString* error = nullptr);

// Both checks the issue names; empty when the file is sound, else what is wrong.
QString databaseProblems(const QString& path);

// SHA-1 of the text as UTF-8, hex.
QString contentHash(const QString& text);

// Time the calling thread has spent runnable but waiting for a CPU, ns (the second field of
// /proc/thread-self/schedstat); -1 where that is not available. On a loaded machine (a CI runner,
// parallel builds) the GUI thread waits for a core now and then; that is the machine's delay, not
// the app's, so the heartbeat subtracts it.
// `runNs` receives the time it has run on a CPU.
qint64 runQueueWaitNs(qint64* runNs = nullptr);

// Spins the event loop until done() or the timeout; false on the timeout.
bool waitUntil(const std::function<bool()>& done, int timeoutMs);

// The walk's actions so far, shared with the watchdog thread (which prints them when the GUI thread
// is frozen and cannot).
class ActionLog {
 public:
  void start() { m_started = nowMs(); }
  void add(const QString& line) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_lines << QStringLiteral("%1s %2").arg((nowMs() - m_started) / 1000.0, 0, 'f', 1).arg(line);
    if (!line.startsWith(QLatin1Char(' '))) m_current = line;  // indented lines are notes on it
  }
  QString current() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_current;
  }
  QString dump(int last = 400) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    const qsizetype from = std::max<qsizetype>(0, m_lines.size() - last);
    return m_lines.mid(from).join(QLatin1Char('\n'));
  }
  int size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return int(m_lines.size());
  }

 private:
  mutable std::mutex m_mutex;
  QStringList m_lines;
  QString m_current;
  qint64 m_started = nowMs();
};

// A GUI-thread timer that measures how late it fires, samples the resident memory once a second, and
// a watchdog thread that ends the process when the timer stops firing altogether.
class Heartbeat : public QObject {
 public:
  Heartbeat(ActionLog& log, quint64 seed, qint64 reportAboveMs)
      : m_log(log), m_seed(seed), m_reportAboveMs(reportAboveMs) {
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(kIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &Heartbeat::beat);
  }
  ~Heartbeat() override { stop(); }

  void start() {
    m_waitNs = runQueueWaitNs();
    m_started = nowMs();
    m_last = m_started;
    m_lastBeat = m_last;
    m_timer.start();
    m_watching = true;
    m_watchdog = std::thread([this] { watch(); });
  }
  void stop() {
    m_timer.stop();
    if (m_watching.exchange(false)) m_watchdog.join();
  }
  // Test-only work on the GUI thread (a reopen, a database check) is not the app's stall.
  void pause() { m_paused = true; }
  void resume() {
    m_waitNs = runQueueWaitNs();
    m_last = nowMs();
    m_lastBeat = m_last;
    m_paused = false;
  }

  // The worst lateness the app caused (run-queue waits taken out), and the worst as measured.
  qint64 worstLatenessMs() const { return m_worst; }
  qint64 worstRawLatenessMs() const { return m_worstRaw; }
  QString worstAction() const { return m_worstAction; }
  const QList<QPair<qint64, qint64>>& rss() const { return m_rss; }  // (ms since start, bytes)

 private:
  static constexpr int kIntervalMs = 25;
  static constexpr qint64 kFrozenMs = 45000;  // a stall this long is a freeze: nothing will report it

  void beat() {
    const qint64 now = nowMs();
    m_lastBeat = now;
    qint64 runNs = 0;
    const qint64 waitNs = runQueueWaitNs(&runNs);
    if (!m_paused) {
      const qint64 raw = now - m_last - kIntervalMs;
      const qint64 starved = waitNs >= 0 && m_waitNs >= 0 ? (waitNs - m_waitNs) / 1000000 : 0;
      const qint64 late = raw - starved;
      m_worstRaw = std::max(m_worstRaw, raw);
      if (late > m_reportAboveMs)
        m_log.add(QStringLiteral("  GUI thread stalled %1 ms (%2 ms of it on a CPU; +%3 ms waiting for one)")
                      .arg(late)
                      .arg((runNs - m_runNs) / 1000000)
                      .arg(starved));
      if (late > m_worst) {
        m_worst = late;
        m_worstAction = m_log.current();
      }
    }
    m_last = now;
    m_waitNs = waitNs;
    m_runNs = runNs;
    if (m_rss.isEmpty() || now - m_started - m_rss.last().first >= 1000)
      m_rss << qMakePair(now - m_started, residentMemoryBytes());
  }

  void watch() {
    while (m_watching) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const qint64 stalled = nowMs() - m_lastBeat;
      if (stalled > (m_paused ? 4 * kFrozenMs : kFrozenMs)) {
        std::fprintf(stderr,
                     "FAIL! soak: the GUI thread has not run for %lld ms (frozen) during: %s\n"
                     "seed=%llu resident memory now %lld MiB\nactions:\n%s\n",
                     qlonglong(stalled), qPrintable(m_log.current()), qulonglong(m_seed),
                     qlonglong(residentMemoryBytes() >> 20), qPrintable(m_log.dump()));
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }

  ActionLog& m_log;
  quint64 m_seed;
  qint64 m_reportAboveMs;
  QTimer m_timer;
  qint64 m_started = 0;
  std::atomic<qint64> m_lastBeat{0};
  std::atomic<bool> m_paused{false};
  std::atomic<bool> m_watching{false};
  std::thread m_watchdog;
  qint64 m_last = 0;
  qint64 m_worst = 0, m_worstRaw = 0;
  qint64 m_waitNs = -1, m_runNs = 0;
  QString m_worstAction;
  QList<QPair<qint64, qint64>> m_rss;
};
