// Device probe and a smoke kernel: proves the toolchain, the runtime and cuBLAS work on this machine
// before any real kernel depends on them.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "kernels.h"

namespace wb::kernels {
namespace {

__global__ void fill_scaled_kernel(float* out, int n, float value, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value * scale * static_cast<float>(i);
}

std::string cuda_error_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

}  // namespace

DeviceProbe probe_devices() {
  DeviceProbe p;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    // Say it the way a user can act on: no GPU, no driver, or a driver older than this CUDA runtime.
    if (e == cudaErrorNoDevice) p.error = "no CUDA device found";
    else if (e == cudaErrorInsufficientDriver)
      p.error = "no CUDA device found (no NVIDIA driver, or one too old for CUDA " +
                std::to_string(CUDART_VERSION / 1000) + ")";
    else p.error = "no usable CUDA device (" + cuda_error_text(e) + ")";
    return p;
  }
  p.device_count = count;
  if (count == 0) {
    p.error = "no CUDA device found";
    return p;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    p.name = prop.name;
    p.compute_major = prop.major;
    p.compute_minor = prop.minor;
    p.total_memory = prop.totalGlobalMem;
  }
  cublasHandle_t handle = nullptr;
  const cublasStatus_t s = cublasCreate(&handle);
  if (s == CUBLAS_STATUS_SUCCESS) {
    p.cublas_ok = true;
    cublasDestroy(handle);
  } else {
    p.error = "cuBLAS handle creation failed (status " + std::to_string(static_cast<int>(s)) + ")";
  }
  return p;
}

std::string run_smoke_test() {
  constexpr int n = 1000;
  float* dev = nullptr;
  cudaError_t e = cudaMalloc(&dev, n * sizeof(float));
  if (e != cudaSuccess) return "cudaMalloc: " + cuda_error_text(e);
  fill_scaled_kernel<<<(n + 255) / 256, 256>>>(dev, n, 2.0f, 0.5f);
  std::vector<float> host(n);
  e = cudaMemcpy(host.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (e != cudaSuccess) return "kernel/cudaMemcpy: " + cuda_error_text(e);
  for (int i = 0; i < n; ++i)
    if (host[i] != static_cast<float>(i)) return "smoke kernel produced a wrong value at " + std::to_string(i);
  return {};
}

}  // namespace wb::kernels
