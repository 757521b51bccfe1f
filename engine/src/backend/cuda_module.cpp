#include "cuda_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <vector>

namespace engine {

namespace {

struct Loaded {
  CudaModule module;
  bool ok = false;
  std::string why;
};

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

// Where the module may be, in order: $WB_CUDA_MODULE, beside the executable (the build tree's
// bin/), the install tree's <libdir>/llm-workbench, and this build's own output (tests run from
// other directories).
std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("WB_CUDA_MODULE"); env && *env) paths.emplace_back(env);
  const auto dir = executable_dir();
  if (!dir.empty()) {
    paths.push_back((dir / WB_CUDA_MODULE_FILE).string());
    paths.push_back((dir / ".." / WB_CUDA_MODULE_INSTALL_DIR / WB_CUDA_MODULE_FILE).string());
  }
  paths.emplace_back(WB_CUDA_MODULE_BUILD_PATH);
  return paths;
}

Loaded load() {
  Loaded l;
  // The driver first: without it the module could load but every call would fail, after mapping
  // the runtime and cuBLAS for nothing.
  if (!dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    l.why = "no CUDA device found (no NVIDIA driver: libcuda.so.1 is not installed)";
    return l;
  }
  std::string tried;
  for (const std::string& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      l.why = "the CUDA module " + path + " could not be loaded: " + dlerror();
      return l;
    }
    auto abi = reinterpret_cast<int (*)()>(dlsym(h, "wb_cuda_module_abi"));
    l.module.probe_devices = reinterpret_cast<void (*)(wb::kernels::DeviceProbe*)>(dlsym(h, "wb_cuda_probe_devices"));
    l.module.run_smoke_test = reinterpret_cast<void (*)(std::string*)>(dlsym(h, "wb_cuda_run_smoke_test"));
    if (!abi || abi() != wb::kernels::k_module_abi || !l.module.probe_devices || !l.module.run_smoke_test) {
      l.why = "the CUDA module " + path + " is from another build of LLM Workbench (rebuild or reinstall it)";
      return l;
    }
    l.ok = true;
    return l;
  }
  l.why = "the CUDA module " + std::string(WB_CUDA_MODULE_FILE) + " was not found (looked at " + tried + ")";
  return l;
}

}  // namespace

const CudaModule* cuda_module(std::string& why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  why = loaded.why;
  return loaded.ok ? &loaded.module : nullptr;
}

}  // namespace engine
