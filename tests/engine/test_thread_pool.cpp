// ThreadPool: every index exactly once, the caller participates, many short jobs back to back
// (the decode pattern) never lose or duplicate work.
#include <QtTest>

#include <atomic>

#include "engine/thread_pool.h"

class TestThreadPool : public QObject {
  Q_OBJECT
 private slots:
  void parallel_for_covers_each_index_once_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("n");
    QTest::newRow("1 thread") << 1 << 100;
    QTest::newRow("2 threads") << 2 << 1001;
    QTest::newRow("more threads than items") << 4 << 3;
    QTest::newRow("no items") << 3 << 0;
  }
  void parallel_for_covers_each_index_once() {
    QFETCH(int, threads);
    QFETCH(int, n);
    engine::ThreadPool pool(threads);
    QCOMPARE(pool.size(), threads);
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    for (int i = 0; i < n; ++i) QCOMPARE(hits[i].load(), 1);
  }

  void many_short_jobs() {
    // The decode pattern: thousands of tiny jobs back to back, with workers racing to join each one.
    engine::ThreadPool pool(3);
    std::atomic<long> total{0};
    for (int job = 0; job < 20000; ++job)
      pool.parallel_for(7, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) total.fetch_add(i + 1);
      });
    QCOMPARE(total.load(), 20000L * 28);
  }

  void jobs_of_different_sizes_back_to_back() {
    // Jobs of few and of many chunks alternate (sgemm calls use one chunk per thread, the other
    // loops four or more), with more threads than cores so workers are preempted anywhere. A worker
    // that read an exhausted job must never claim a chunk while the caller is writing the next job
    // (it once could, ran a chunk twice and counted it into the next job: the caller then waited
    // forever, seen with 16 threads on 16 cores).
    engine::ThreadPool pool(12);
    std::atomic<long> total{0};
    long want = 0;
    for (int job = 0; job < 30000; ++job) {
      const int64_t n = 1 + job % 97;
      pool.parallel_for(
          n, [&](int64_t b, int64_t e) { total.fetch_add(e - b); }, job % 2 ? 1 : 8);
      want += n;
    }
    QCOMPARE(total.load(), want);
  }

  void caller_finishes_when_workers_are_asleep() {
    // Let the workers fall asleep, then issue a job: it must complete (the caller does the work or
    // wakes them), and every chunk is still done exactly once.
    engine::ThreadPool pool(2);
    QThread::msleep(50);
    std::vector<std::atomic<int>> hits(64);
    pool.parallel_for(
        64,
        [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        },
        1);
    for (auto& h : hits) QCOMPARE(h.load(), 1);
  }

  void exception_reaches_the_caller_and_pool_survives() {
    engine::ThreadPool pool(2);
    for (int round = 0; round < 200; ++round) {
      bool thrown = false;
      try {
        pool.parallel_for(64, [&](int64_t b, int64_t) {
          if (b >= 32) throw std::runtime_error("chunk failed");  // on whichever thread claims it
        });
      } catch (const std::runtime_error& e) {
        thrown = QString(e.what()) == "chunk failed";
      }
      QVERIFY(thrown);
    }
    std::atomic<int> sum{0};
    pool.parallel_for(10, [&](int64_t b, int64_t e) { sum += int(e - b); });
    QCOMPARE(sum.load(), 10);
  }

  void default_size_is_core_count() {
    engine::ThreadPool pool(0);
    QCOMPARE(pool.size(), engine::default_thread_count());
  }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
