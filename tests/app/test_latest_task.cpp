// LatestTask (app/services/latesttask.h), the one "newest task wins" runner: only the newest task's
// outcome is delivered, on the owner's thread; a cancelled or replaced task's result, error and
// progress never arrive, even when already queued; errors arrive as messages; progress arrives
// (coalesced) while the task runs; and an owner destroyed while its task runs is neither waited for
// nor touched afterwards.
#include <QPointer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QThreadPool>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "services/latesttask.h"

namespace {

// Blocks a task until the test opens it (bounded, so a failing test cannot hang).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> entered{false};
  void waitIn(const TaskContext* context = nullptr) {
    entered = true;
    for (int i = 0; i < 60000 && !open && !(context && context->cancelled()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

// What reached the owner's thread, and on which thread it ran.
struct Received {
  QList<int> results;
  QStringList errors;
  QList<double> progress;
  bool offThread = false;
};

// Lets the pool finish everything, then the owner's thread run what was queued to it.
void drain() {
  QThreadPool::globalInstance()->waitForDone();
  QTest::qWait(50);
}

// An owner whose task handlers record into a Received that outlives it.
class Owner : public QObject {
 public:
  explicit Owner(Received* into) : m_into(into) {}
  void start(LatestTask<int>::Work work) {
    m_task.start(
        std::move(work),
        [this](int r) {
          record();
          m_into->results << r;
        },
        [this](const QString& e) {
          record();
          m_into->errors << e;
        },
        [this](double f) {
          record();
          m_into->progress << f;
        });
  }
  LatestTask<int>& task() { return m_task; }

 private:
  void record() {
    if (QThread::currentThread() != thread()) m_into->offThread = true;
  }
  Received* m_into;
  LatestTask<int> m_task{this};
};

}  // namespace

class TestLatestTask : public QObject {
  Q_OBJECT

 private slots:
  void newest_task_wins_and_the_replaced_one_is_told_to_stop() {
    Received got;
    Owner owner(&got);
    Gate gate;
    std::atomic<bool> firstSawCancel = false;
    owner.start([&](const TaskContext& c) {
      gate.waitIn(&c);
      firstSawCancel = c.cancelled();
      return 1;
    });
    QTRY_VERIFY_WITH_TIMEOUT(gate.entered, 60000);
    QVERIFY(owner.task().busy());
    owner.start([](const TaskContext&) { return 2; });
    QTRY_VERIFY_WITH_TIMEOUT(!owner.task().busy(), 60000);
    drain();
    QVERIFY(firstSawCancel);
    QCOMPARE(got.results, QList<int>{2});
    QVERIFY(got.errors.isEmpty());
    QVERIFY(!got.offThread);
  }

  void a_result_already_queued_is_dropped_when_a_newer_task_starts() {
    Received got;
    Owner owner(&got);
    owner.start([](const TaskContext&) { return 1; });
    // The first task is done and its result queued for this thread, which has not run it yet.
    QThreadPool::globalInstance()->waitForDone();
    owner.start([](const TaskContext&) { return 2; });
    QTRY_VERIFY_WITH_TIMEOUT(!owner.task().busy(), 60000);
    drain();
    QCOMPARE(got.results, QList<int>{2});
  }

  void cancel_drops_the_result_error_and_progress() {
    Received got;
    Owner owner(&got);
    owner.start([](const TaskContext& c) {
      c.progress(0.5);
      return 3;
    });
    QThreadPool::globalInstance()->waitForDone();  // result and progress queued
    owner.task().cancel();
    QVERIFY(!owner.task().busy());
    drain();
    QVERIFY(got.results.isEmpty());
    QVERIFY(got.progress.isEmpty());

    owner.start([](const TaskContext&) -> int { throw std::runtime_error("late failure"); });
    owner.task().cancel();
    drain();
    QVERIFY(got.errors.isEmpty());
    QVERIFY(got.results.isEmpty());
  }

  void a_cancelled_task_sees_the_flag_and_progress_says_stop() {
    Received got;
    Owner owner(&got);
    Gate gate;
    std::atomic<bool> progressBeforeCancel = false, progressAfterCancel = true, flagAfterCancel = false;
    owner.start([&](const TaskContext& c) {
      progressBeforeCancel = c.progress(0.1);
      gate.waitIn();
      progressAfterCancel = c.progress(0.9);
      flagAfterCancel = c.cancelFlag().load();
      return 4;
    });
    QTRY_VERIFY_WITH_TIMEOUT(gate.entered, 60000);
    owner.task().cancel();
    gate.open = true;
    drain();
    QVERIFY(progressBeforeCancel);
    QVERIFY(!progressAfterCancel);
    QVERIFY(flagAfterCancel);
    QVERIFY(got.results.isEmpty());
  }

  void an_exception_is_delivered_as_its_message() {
    Received got;
    Owner owner(&got);
    owner.start([](const TaskContext&) -> int { throw std::runtime_error("data.jsonl: line 3: not JSON"); });
    QTRY_VERIFY_WITH_TIMEOUT(!owner.task().busy(), 60000);
    QCOMPARE(got.errors, QStringList{QStringLiteral("data.jsonl: line 3: not JSON")});
    QVERIFY(got.results.isEmpty());
    QVERIFY(!got.offThread);
    // A task without an error handler ends too (busy clears), it just reports nothing.
    LatestTask<int> bare(this);
    bool delivered = false;
    bare.start([](const TaskContext&) -> int { throw std::runtime_error("x"); }, [&](int) { delivered = true; });
    QTRY_VERIFY_WITH_TIMEOUT(!bare.busy(), 60000);
    QVERIFY(!delivered);
  }

  void progress_arrives_on_the_owners_thread_while_the_task_runs() {
    Received got;
    Owner owner(&got);
    Gate gate;
    owner.start([&](const TaskContext& c) {
      c.progress(0.25);
      gate.waitIn();
      c.progress(0.75);
      return 5;
    });
    QTRY_COMPARE_WITH_TIMEOUT(got.progress, QList<double>{0.25}, 60000);
    QVERIFY(got.results.isEmpty());  // the task is still held at the gate
    QVERIFY(owner.task().busy());
    gate.open = true;
    QTRY_VERIFY_WITH_TIMEOUT(!owner.task().busy(), 60000);
    QCOMPARE(got.results, QList<int>{5});
    QCOMPARE(got.progress.last(), 0.75);  // the last report, delivered before the result
    QVERIFY(!got.offThread);
  }

  void many_progress_reports_are_coalesced() {
    Received got;
    Owner owner(&got);
    owner.start([](const TaskContext& c) {
      for (int i = 1; i <= 100000; ++i) c.progress(i / 100000.0);
      return 6;
    });
    QTRY_VERIFY_WITH_TIMEOUT(!owner.task().busy(), 60000);
    QVERIFY(!got.progress.isEmpty());
    QVERIFY2(got.progress.size() < 100000, qPrintable(QString::number(got.progress.size())));
    QCOMPARE(got.progress.last(), 1.0);
    for (int i = 1; i < got.progress.size(); ++i) QVERIFY(got.progress[i] >= got.progress[i - 1]);
  }

  void an_owner_destroyed_while_its_task_runs_is_not_waited_for_nor_touched() {
    Received got;
    auto* owner = new Owner(&got);
    auto gate = std::make_shared<Gate>();
    auto finished = std::make_shared<std::atomic<bool>>(false);
    // The task ignores the stop flag on purpose: it reports and returns after its owner is gone.
    owner->start([gate, finished](const TaskContext& c) {
      gate->waitIn();
      c.progress(0.5);
      finished->store(true);
      return 7;
    });
    QTRY_VERIFY_WITH_TIMEOUT(gate->entered, 60000);
    delete owner;  // must not wait for the task, which is still held at the gate
    QVERIFY(!finished->load());
    gate->open = true;
    drain();
    QVERIFY(finished->load());
    QVERIFY(got.results.isEmpty());
    QVERIFY(got.progress.isEmpty());
    QVERIFY(got.errors.isEmpty());
  }

  void an_owner_destroyed_with_a_result_queued_gets_nothing() {
    Received got;
    auto* owner = new Owner(&got);
    owner->start([](const TaskContext& c) {
      c.progress(0.5);
      return 8;
    });
    QThreadPool::globalInstance()->waitForDone();  // result and progress queued to the owner's thread
    delete owner;
    QTest::qWait(50);
    QVERIFY(got.results.isEmpty());
    QVERIFY(got.progress.isEmpty());
  }

  void outcomes_arrive_on_the_owners_thread_not_the_starters() {
    QThread ownerThread;
    ownerThread.start();
    QObject owner;
    owner.moveToThread(&ownerThread);
    std::atomic<QThread*> resultOn = nullptr, progressOn = nullptr;
    {
      LatestTask<int> task(&owner);
      task.start(
          [](const TaskContext& c) {
            c.progress(0.5);
            return 9;
          },
          [&](int) { resultOn = QThread::currentThread(); }, {},
          [&](double) { progressOn = QThread::currentThread(); });
      QTRY_VERIFY_WITH_TIMEOUT(resultOn.load() != nullptr, 60000);
    }
    ownerThread.quit();
    QVERIFY(ownerThread.wait(60000));
    QCOMPARE(resultOn.load(), &ownerThread);
    QCOMPARE(progressOn.load(), &ownerThread);
  }
};

QTEST_GUILESS_MAIN(TestLatestTask)
#include "test_latest_task.moc"
