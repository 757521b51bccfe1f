// OpenBLAS's kernel choice checked against what the CPU runs (see engine/blas_core.h).
#include "engine/blas_core.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <strings.h>

extern "C" {
// Declared by OpenBLAS; not in every cblas.h.
char* openblas_get_corename(void);
}

namespace engine {
namespace {

// Set on the restarted process: the core OpenBLAS had chosen before the restart.
constexpr const char* k_restarted_from = "WB_BLAS_CORE_RESTARTED_FROM";

struct Core {
  const char* name;  // as openblas_get_corename() spells it
  int level;
};

// OpenBLAS's x86-64 core names (driver/others/dynamic.c) by the widest vectors their sgemm uses.
// Steamroller's kernels are AVX + FMA3 without AVX2, so they count as AVX here.
constexpr std::array k_cores = {
    Core{"Katmai", 0},       Core{"Coppermine", 0},     Core{"Northwood", 0},
    Core{"Prescott", 0},     Core{"Banias", 0},         Core{"Atom", 0},
    Core{"Core2", 0},        Core{"Penryn", 0},         Core{"Dunnington", 0},
    Core{"Nehalem", 0},      Core{"Athlon", 0},         Core{"Opteron", 0},
    Core{"Opteron_SSE3", 0}, Core{"Barcelona", 0},      Core{"Nano", 0},
    Core{"Bobcat", 0},       Core{"Sandybridge", 1},    Core{"Bulldozer", 1},
    Core{"Piledriver", 1},   Core{"Steamroller", 1},    Core{"Haswell", 2},
    Core{"Zen", 2},          Core{"Excavator", 2},      Core{"SkylakeX", 3},
    Core{"Cooperlake", 3},   Core{"SapphireRapids", 3},
};

// The core we ask for at each level: the kernels every CPU of that level runs.
constexpr std::array<const char*, 4> k_core_for_level = {"", "Sandybridge", "Haswell", "SkylakeX"};

}  // namespace

int blas_core_level(std::string_view openblas_core) {
  for (const Core& c : k_cores)
    if (openblas_core.size() == std::strlen(c.name) &&
        strncasecmp(openblas_core.data(), c.name, openblas_core.size()) == 0)
      return c.level;
  return -1;
}

int cpu_vector_level() {
#if defined(__x86_64__)
  // __builtin_cpu_supports also checks that the OS saves the wide registers (XCR0).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return 3;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 2;
  if (__builtin_cpu_supports("avx")) return 1;
#endif
  return 0;
}

std::string better_blas_core(std::string_view chosen, int cpu_level) {
  const int level = blas_core_level(chosen);
  if (level < 0 || level >= cpu_level || cpu_level <= 0) return {};
  return k_core_for_level[static_cast<size_t>(std::min(cpu_level, 3))];
}

std::string blas_core_name() {
  const char* core = openblas_get_corename();
  return core ? core : "?";
}

std::string blas_core_replaced() {
  const char* from = std::getenv(k_restarted_from);
  return from && std::getenv("OPENBLAS_CORETYPE") ? from : "";
}

void restart_with_better_blas_core(char** argv) {
  if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set && *set) return;  // the user's, or ours already
  std::string chosen = blas_core_name();
  if (const char* assume = std::getenv("WB_ASSUME_BLAS_CORE"); assume && *assume) chosen = assume;
  const std::string better = better_blas_core(chosen, cpu_vector_level());
  if (better.empty()) return;
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  setenv(k_restarted_from, chosen.c_str(), 1);
  execv("/proc/self/exe", argv);
  // execv returned: it failed (no /proc, say). Carry on with the kernels we have, and leave nothing
  // that blas_core_replaced() would misreport.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(k_restarted_from);
}

}  // namespace engine
