// Loading libwb_cuda.so, the CUDA kernels' module (kernels/module.cu), on first use.
//
// The executables do not link the CUDA runtime or cuBLAS: mapping them costs about 230 MiB of
// resident memory in every process, on machines that cannot use them at all. The module is opened
// only where an NVIDIA driver (libcuda.so.1) is installed; without one the probe answers at once.
#pragma once

#include <string>

#include "kernels.h"

namespace engine {

struct CudaModule {
  void (*probe_devices)(wb::kernels::DeviceProbe*) = nullptr;
  void (*run_smoke_test)(std::string*) = nullptr;
};

// The loaded module, or nullptr with `why` saying what is missing (no driver, module not found or
// from another build). Loaded once per process; thread-safe.
const CudaModule* cuda_module(std::string& why);

}  // namespace engine
