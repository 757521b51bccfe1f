// The CUDA build's device probe and smoke kernel. Without a GPU this checks that the probe reports
// "no device" cleanly (never a crash) and skips the kernel run; with one, the kernel must produce
// the exact values checked on the host.
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

  void smoke_kernel_runs_on_a_device() {
    const engine::CudaProbe p = engine::probe_cuda();
    if (!p.compiled_in || !p.usable) QSKIP("no usable CUDA device");
    const std::string err = engine::run_cuda_smoke_test();
    QVERIFY2(err.empty(), err.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCudaProbe)
#include "test_cuda_probe.moc"
