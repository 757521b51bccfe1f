// Picks the backend that runs a model and records why, so the UI can say
// "CPU: no CUDA device found" instead of leaving the user to guess.
#include "engine/backend.h"

#ifdef WB_HAVE_CUDA
#include "cuda_module.h"
#endif

namespace engine {

#ifdef WB_HAVE_CUDA
namespace {

// The module's probe, or "no device" with the reason the module is unavailable.
wb::kernels::DeviceProbe probe_devices() {
  wb::kernels::DeviceProbe probe;
  if (const CudaModule* m = cuda_module(probe.error)) m->probe_devices(&probe);
  return probe;
}

}  // namespace
#endif

BackendChoice choose_backend(BackendPreference pref, int threads) {
  BackendChoice choice;
#ifdef WB_HAVE_CUDA
  if (pref != BackendPreference::Cpu) {
    const wb::kernels::DeviceProbe probe = probe_devices();
    if (probe.device_count == 0) {
      choice.reason = "CPU: " + probe.error;
    } else if (!probe.cublas_ok) {
      choice.reason = "CPU: CUDA device " + probe.name + " found but unusable: " + probe.error;
    } else {
      // The CUDA ops are not implemented yet; only the device probe and smoke kernel are.
      choice.reason = "CPU: CUDA device " + probe.name + " (sm_" + std::to_string(probe.compute_major) +
                      std::to_string(probe.compute_minor) + ") found, but the CUDA backend's ops are not built yet";
    }
  } else {
    choice.reason = "CPU: chosen in settings";
  }
#else
  choice.reason = pref == BackendPreference::Cpu
                      ? "CPU: chosen in settings"
                      : "CPU: this build has no CUDA backend (built with WB_WITH_CUDA=OFF or no nvcc)";
#endif
  choice.backend = make_cpu_backend(threads);
  return choice;
}

CudaProbe probe_cuda() {
  CudaProbe p;
#ifdef WB_HAVE_CUDA
  const wb::kernels::DeviceProbe d = probe_devices();
  p.compiled_in = true;
  p.device_count = d.device_count;
  p.device_name = d.name;
  p.usable = d.device_count > 0 && d.cublas_ok;
  p.detail = d.error;
#else
  p.detail = "built without CUDA";
#endif
  return p;
}

std::string run_cuda_smoke_test() {
#ifdef WB_HAVE_CUDA
  std::string why;
  const CudaModule* m = cuda_module(why);
  if (!m) return why;
  std::string error;
  m->run_smoke_test(&error);
  return error;
#else
  return "built without CUDA";
#endif
}

}  // namespace engine
