// The check of OpenBLAS's kernel choice against the CPU (engine/blas_core.h). The restart itself is
// exercised through the CLI (test_cli's generic_blas_kernels_are_replaced).
#include <QtTest>

#include "engine/blas_core.h"

class TestBlasCore : public QObject {
  Q_OBJECT
 private slots:
  void levels_of_known_cores() {
    QCOMPARE(engine::blas_core_level("Prescott"), 0);
    QCOMPARE(engine::blas_core_level("nehalem"), 0);  // OPENBLAS_CORETYPE is case-insensitive
    QCOMPARE(engine::blas_core_level("Sandybridge"), 1);
    QCOMPARE(engine::blas_core_level("Haswell"), 2);
    QCOMPARE(engine::blas_core_level("Zen"), 2);
    QCOMPARE(engine::blas_core_level("SkylakeX"), 3);
    QCOMPARE(engine::blas_core_level("Cooperlake"), 3);
    QCOMPARE(engine::blas_core_level("Zen5"), -1);
    QCOMPARE(engine::blas_core_level(""), -1);
  }

  void better_core_data() {
    QTest::addColumn<QString>("chosen");
    QTest::addColumn<int>("cpu_level");
    QTest::addColumn<QString>("better");
    QTest::newRow("fallback on an AVX-512 CPU") << "Prescott" << 3 << "SkylakeX";
    QTest::newRow("fallback on an AVX2 CPU") << "Prescott" << 2 << "Haswell";
    QTest::newRow("AVX kernels on an AVX2 CPU") << "Sandybridge" << 2 << "Haswell";
    QTest::newRow("Zen kernels on an AVX-512 CPU") << "Zen" << 3 << "SkylakeX";
    QTest::newRow("right choice") << "Haswell" << 2 << "";
    QTest::newRow("best choice") << "SkylakeX" << 3 << "";
    QTest::newRow("newer than our table") << "Zen5" << 3 << "";
    QTest::newRow("CPU without AVX") << "Nehalem" << 0 << "";
    QTest::newRow("core above the CPU") << "SkylakeX" << 2 << "";
  }
  void better_core() {
    QFETCH(QString, chosen);
    QFETCH(int, cpu_level);
    QFETCH(QString, better);
    QCOMPARE(QString::fromStdString(engine::better_blas_core(chosen.toStdString(), cpu_level)), better);
  }

  void this_process() {
    // ctest does not restart test executables: whatever OpenBLAS chose is reported as is.
    QVERIFY(!engine::blas_core_name().empty());
    QVERIFY(engine::cpu_vector_level() >= 0 && engine::cpu_vector_level() <= 3);
    if (qEnvironmentVariableIsEmpty("WB_BLAS_CORE_RESTARTED_FROM")) QVERIFY(engine::blas_core_replaced().empty());
  }
};

QTEST_APPLESS_MAIN(TestBlasCore)
#include "test_blas_core.moc"
