// Launchers of the CUDA kernels, built into the module libwb_cuda.so. The engine reaches them only
// through the module's C entry points (module.cu), loaded by engine/src/backend/cuda_module.cpp; nothing
// here exposes CUDA types, so the engine compiles without CUDA headers.
// Every launcher mirrors its CPU function name-for-name with a trailing stream (void* = cudaStream_t).
#pragma once

#include <cstdint>
#include <string>

namespace wb::kernels {

// Bumped whenever an entry point or a type crossing the module boundary changes.
inline constexpr int k_module_abi = 1;

struct DeviceProbe {
  int device_count = 0;
  std::string name;  // of device 0
  int compute_major = 0, compute_minor = 0;
  uint64_t total_memory = 0;
  bool cublas_ok = false;  // a cuBLAS handle could be created on device 0
  std::string error;       // why no usable device, when device_count == 0 or !cublas_ok
};

// Never throws: reports "no device", driver errors and cuBLAS failures in `error`.
DeviceProbe probe_devices();

// Runs the smoke kernel (fill + scale) on device 0 and checks the result on the host.
// Returns an empty string on success, else what failed.
std::string run_smoke_test();

}  // namespace wb::kernels
