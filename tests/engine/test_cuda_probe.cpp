// The CUDA build's device probe and smoke kernel. Without a GPU this checks that the probe reports
// "no device" cleanly (never a crash) and skips the kernel run; with one, the kernel must produce
// the exact values checked on the host. The CUDA code lives in a module loaded at run time
// (engine/src/backend/cuda_module.cpp); tests/CMakeLists.txt also runs module_loads_with_a_stub_driver
// with the toolkit's stub driver on the library path, so the loading path is exercised here too.
#include <QtTest>

#include "engine/backend.h"

class TestCudaProbe : public QObject {
  Q_OBJECT
 private slots:
  void probe_is_clean() {
    const engine::CudaProbe p = engine::probe_cuda();
    if (!p.compiled_in) QSKIP("this build has no CUDA backend");
    if (!p.usable) {
      QVERIFY2(!p.detail.empty(), "an unusable CUDA setup must say why");
      const engine::BackendChoice c = engine::choose_backend(engine::BackendPreference::Auto, 1);
      QVERIFY2(QString::fromStdString(c.reason).contains(QString::fromStdString(p.detail)), c.reason.c_str());
    } else {
      QVERIFY(!p.device_name.empty());
    }
  }

  void module_loads_with_a_stub_driver() {
    if (qgetenv("WB_EXPECT_CUDA_STUB") != "1") QSKIP("run by the test_cuda_probe_stub_driver entry only");
    const engine::CudaProbe p = engine::probe_cuda();
    QVERIFY(p.compiled_in);
    QVERIFY(!p.usable);
    // Only the module's own probe (the CUDA runtime asking the driver) can say this: the engine
    // found libcuda.so.1, opened libwb_cuda.so, checked its ABI and called it.
    QVERIFY2(QString::fromStdString(p.detail).contains("stub", Qt::CaseInsensitive), p.detail.c_str());
    QVERIFY2(!engine::run_cuda_smoke_test().empty(), "the smoke kernel cannot succeed on the stub driver");
  }

  void executables_do_not_link_cuda() {
    // The point of the module: without a driver the process never maps the CUDA runtime or cuBLAS.
    if (qgetenv("WB_EXPECT_CUDA_STUB") == "1") QSKIP("the stub run loads the module on purpose");
    const engine::CudaProbe p = engine::probe_cuda();
    if (!p.compiled_in) QSKIP("this build has no CUDA backend");
    QFile maps("/proc/self/maps");
    QVERIFY(maps.open(QIODevice::ReadOnly));
    const QByteArray mapped = maps.readAll();
    if (p.detail.find("libcuda.so.1 is not installed") != std::string::npos) {
      QVERIFY2(!mapped.contains("libcublas"), "cuBLAS is mapped although no driver is installed");
      QVERIFY2(!mapped.contains("libcudart"), "the CUDA runtime is mapped although no driver is installed");
    }
  }

  void smoke_kernel_runs_on_a_device() {
    const engine::CudaProbe p = engine::probe_cuda();
    if (!p.compiled_in || !p.usable) QSKIP("no usable CUDA device");
    const std::string err = engine::run_cuda_smoke_test();
    QVERIFY2(err.empty(), err.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCudaProbe)
#include "test_cuda_probe.moc"
