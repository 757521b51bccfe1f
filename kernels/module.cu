// The C entry points of libwb_cuda.so, the module the engine loads with dlopen (see
// engine/src/cuda_module.cpp). Keeping the CUDA runtime and cuBLAS out of the executables means a
// machine without an NVIDIA driver never maps them (about 230 MiB of resident memory in every
// process otherwise). The module is built by the same compiler and standard library as the engine,
// so the C++ types of kernels.h cross the boundary by pointer; the ABI number guards against a stale
// module from another build.
#include "kernels.h"

extern "C" {

__attribute__((visibility("default"))) int wb_cuda_module_abi() { return wb::kernels::k_module_abi; }

__attribute__((visibility("default"))) void wb_cuda_probe_devices(wb::kernels::DeviceProbe* out) {
  *out = wb::kernels::probe_devices();
}

__attribute__((visibility("default"))) void wb_cuda_run_smoke_test(std::string* error) {
  *error = wb::kernels::run_smoke_test();
}

}  // extern "C"
