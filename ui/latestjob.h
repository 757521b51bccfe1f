// LatestJob: runs the newest of a series of computations on a thread pool and hands its result back on
// the owner's thread; an older one still running is told to stop, and its result, should it arrive
// anyway, is dropped. For the Inspect page's per-head images: a 1024-token inspection is ~150 M
// attention weights, too much for the GUI thread, and only the inspection (or head) on screen matters.
//
// The work gets a flag it should poll between chunks and return early when it is set (what it
// returns then is thrown away). Results leave the pool through a QFutureWatcher, i.e. a queued signal
// to the owner's thread; each carries the number of the start() that made it, and only the latest
// number is delivered. The owner keeps a LatestJob as a member: its watchers are the owner's children,
// so nothing is delivered once the owner is gone, and the destructor tells a running job to stop.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

template <typename Result>
class LatestJob {
 public:
  using Work = std::function<Result(const std::atomic<bool>& cancelled)>;
  using Deliver = std::function<void(Result)>;

  explicit LatestJob(QObject* owner, QThreadPool* pool = QThreadPool::globalInstance()) : m_owner(owner), m_pool(pool) {}
  ~LatestJob() { cancel(); }
  LatestJob(const LatestJob&) = delete;
  LatestJob& operator=(const LatestJob&) = delete;

  // Cancels the running job (if any) and starts `work`; `deliver` runs on the owner's thread with its
  // result unless start() or cancel() is called again first.
  void start(Work work, Deliver deliver) {
    cancel();
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    m_cancelled = cancelled;
    const quint64 number = ++m_started;
    auto* watcher = new QFutureWatcher<Result>(m_owner);
    QObject::connect(watcher, &QFutureWatcherBase::finished, m_owner, [this, watcher, number, deliver = std::move(deliver)] {
      watcher->deleteLater();
      if (number != m_started) return;  // a newer start() or a cancel() came in meanwhile
      m_cancelled.reset();
      deliver(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(m_pool, [work = std::move(work), cancelled] { return work(*cancelled); }));
  }

  // Stops waiting for the running job: it is told to stop, and its result will not be delivered.
  void cancel() {
    if (m_cancelled) m_cancelled->store(true);
    m_cancelled.reset();
    ++m_started;
  }

  // A job has been started and its result not yet delivered.
  bool busy() const { return m_cancelled != nullptr; }

 private:
  QObject* m_owner;
  QThreadPool* m_pool;
  std::shared_ptr<std::atomic<bool>> m_cancelled;  // the running job's flag; null when none is awaited
  quint64 m_started = 0;                           // numbers the start()s; bumped by cancel() too
};
