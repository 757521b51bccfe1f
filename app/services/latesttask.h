// LatestTask: runs the newest of a series of computations on a thread pool and hands its outcome
// back on the owner's thread. Starting a task (or cancel()) tells the one still running to stop, and
// whatever that one produces afterwards -- result, error or progress -- is dropped. For work whose
// newest request is the only one that matters: the Inspect page's per-head images (a 1024-token
// inspection is ~150 M attention weights, too much for the GUI thread), the fine-tuning wizard's
// model loads, data checks and evaluations.
//
// The work runs with a TaskContext: it polls cancelled() (or passes cancelFlag() to code that polls
// an atomic) between chunks and returns early once it is set, and reports progress with
// progress(fraction), which returns false once cancelled -- the shape of an engine callback. What a
// cancelled task returns or throws is thrown away. An exception from the work is delivered to the
// owner as its message.
//
// Invariants
// - Delivery happens on the owner's thread, through a queued call, and only for the newest start()
//   not since cancelled: each task carries its number, checked on the owner's thread at delivery.
// - Progress reports are coalesced: at most one is queued per task at a time, carrying the latest value.
// - Nothing waits for a task: neither start(), cancel() nor the destructor joins a thread. The
//   destructor tells a running task to stop and cuts it off from the owner: a task that finishes
//   later posts nothing, so it never touches a destroyed owner. (The work itself must therefore own
//   or share everything it reads, never point into the owner.)
// - A cancelled task may still be running while the next one starts; it stops at its next poll.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <QThreadPool>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace latesttask_detail {

// What a task and its runner share: the queued-call target (null once the runner is gone) and the
// task numbers. `relay` is guarded by `mutex`, so a task never posts to an object being destroyed;
// the numbers are written by the runner and read where the queued calls run (the owner's thread).
struct Link {
  std::mutex mutex;
  QObject* relay = nullptr;
  quint64 started = 0;               // numbers the start()s
  std::atomic<quint64> awaited = 0;  // the task whose outcome is still wanted; 0 for none

  // From a task's thread: queues `call` on the owner's thread, or drops it when the runner is gone.
  template <typename Call>
  void post(Call&& call) {
    std::lock_guard<std::mutex> lock(mutex);
    if (relay) QMetaObject::invokeMethod(relay, std::forward<Call>(call), Qt::QueuedConnection);
  }
};

}  // namespace latesttask_detail

// What a running task sees of its runner: the stop flag and the progress channel.
class TaskContext {
 public:
  using ProgressSink = std::function<void(double)>;
  TaskContext(std::shared_ptr<const std::atomic<bool>> cancelled, ProgressSink progress)
      : m_cancelled(std::move(cancelled)), m_progress(std::move(progress)) {}

  bool cancelled() const { return m_cancelled->load(std::memory_order_relaxed); }
  const std::atomic<bool>& cancelFlag() const { return *m_cancelled; }
  // Reports `fraction` (0..1) of the work done; returns false once the task should stop.
  bool progress(double fraction) const {
    if (cancelled()) return false;
    if (m_progress) m_progress(fraction);
    return !cancelled();
  }

 private:
  std::shared_ptr<const std::atomic<bool>> m_cancelled;
  ProgressSink m_progress;
};

template <typename Result>
class LatestTask {
 public:
  using Work = std::function<Result(const TaskContext& context)>;
  using OnResult = std::function<void(Result)>;
  using OnError = std::function<void(const QString& message)>;
  using OnProgress = std::function<void(double fraction)>;

  // Results are delivered on `owner`'s thread.
  explicit LatestTask(QObject* owner, QThreadPool* pool = QThreadPool::globalInstance())
      : m_pool(pool), m_link(std::make_shared<latesttask_detail::Link>()) {
    m_relay = new QObject;
    if (owner && owner->thread() != m_relay->thread()) m_relay->moveToThread(owner->thread());
    m_link->relay = m_relay;
  }
  ~LatestTask() {
    cancel();
    {
      std::lock_guard<std::mutex> lock(m_link->mutex);
      m_link->relay = nullptr;
    }
    // Deleting the relay drops the calls already queued to it; one on another thread goes at its next
    // event loop turn, after those calls, which find nothing awaited.
    if (m_relay->thread() == QThread::currentThread()) delete m_relay;
    else m_relay->deleteLater();
  }
  LatestTask(const LatestTask&) = delete;
  LatestTask& operator=(const LatestTask&) = delete;

  // Cancels the running task (if any) and starts `work`. On the owner's thread, unless start() or
  // cancel() comes first: `onProgress` with each (coalesced) report, then either `onResult` with what
  // the work returned or `onError` with the message of what it threw.
  void start(Work work, OnResult onResult, OnError onError = {}, OnProgress onProgress = {}) {
    cancel();
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    m_cancelled = cancelled;
    const quint64 number = ++m_link->started;
    m_link->awaited = number;
    std::shared_ptr<latesttask_detail::Link> link = m_link;

    // Coalescing: the newest value waits in `latest`; a queued call is in flight while `queued` is set.
    struct ProgressSlot {
      std::atomic<double> latest{0};
      std::atomic<bool> queued{false};
    };
    auto slot = std::make_shared<ProgressSlot>();
    TaskContext::ProgressSink sink;
    if (onProgress)
      sink = [link, number, slot, onProgress](double fraction) {
        slot->latest.store(fraction);
        if (slot->queued.exchange(true)) return;
        link->post([link, number, slot, onProgress] {
          slot->queued.store(false);
          if (link->awaited == number) onProgress(slot->latest.load());
        });
      };

    m_pool->start([work = std::move(work), onResult = std::move(onResult), onError = std::move(onError), link, number,
                   cancelled, sink = std::move(sink)] {
      if (cancelled->load()) return;  // replaced before it began
      const TaskContext context(cancelled, sink);
      auto result = std::make_shared<std::optional<Result>>();
      QString error;
      try {
        result->emplace(work(context));
      } catch (const std::exception& e) {
        error = QString::fromUtf8(e.what());
        if (error.isEmpty()) error = QStringLiteral("the task failed");
      } catch (...) {
        error = QStringLiteral("the task failed");
      }
      if (cancelled->load()) return;
      link->post([link, number, result, error, onResult, onError] {
        if (link->awaited != number) return;  // a newer start() or a cancel() came in meanwhile
        link->awaited = 0;
        if (result->has_value()) onResult(std::move(**result));
        else if (onError) onError(error);
      });
    });
  }

  // Stops waiting for the running task: it is told to stop, and nothing more of it is delivered.
  void cancel() {
    if (m_cancelled) m_cancelled->store(true);
    m_cancelled.reset();
    m_link->awaited = 0;
  }

  // A task has been started and its outcome not yet delivered (nor cancelled).
  bool busy() const { return m_link->awaited != 0; }

 private:
  QThreadPool* m_pool;
  std::shared_ptr<latesttask_detail::Link> m_link;
  QObject* m_relay;                                // lives on the owner's thread; receives the queued calls
  std::shared_ptr<std::atomic<bool>> m_cancelled;  // the running task's flag; null when none is awaited
};
