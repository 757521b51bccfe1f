// Which of OpenBLAS's CPU kernels this process runs, and the remedy when that is the wrong one.
//
// Debian's OpenBLAS carries kernels for many CPUs and picks one by CPU model as the library loads.
// A CPU newer than the library's table (seen on a virtualised Xeon with AVX-512: OpenBLAS 0.3.21
// picked "Prescott", its SSE3 fallback) gets the generic kernels: every f32 matrix product then runs
// at a third of the speed the CPU can give. The choice is made before main() and cannot be changed
// afterwards; the library honours OPENBLAS_CORETYPE when it loads, so the executables restart
// themselves once with it set (restart_with_better_blas_core). A value the user set is never
// overridden.
#pragma once

#include <string>
#include <string_view>

namespace engine {

// The vector instruction level a kernel family needs or a CPU offers: 0 SSE, 1 AVX, 2 AVX2 + FMA,
// 3 AVX-512 (F, BW, DQ, VL).
int blas_core_level(std::string_view openblas_core);  // -1 for a name not in our table
int cpu_vector_level();

// The OpenBLAS core to ask for, or "" when `chosen` is as good as the CPU allows (or unknown to us:
// a core newer than our table is taken to know its CPU).
std::string better_blas_core(std::string_view chosen, int cpu_level);

// The core OpenBLAS runs in this process, e.g. "SkylakeX".
std::string blas_core_name();

// The core OpenBLAS had chosen by itself when restart_with_better_blas_core replaced it (so the
// backend can say "OpenBLAS (SkylakeX, not Prescott)"), else "".
std::string blas_core_replaced();

// Call first thing in main(), before threads or files exist: when OpenBLAS picked kernels below what
// this CPU runs and OPENBLAS_CORETYPE is unset, sets it and replaces the process with a fresh copy of
// itself (same argv, via /proc/self/exe). Returns only when no restart was needed, or when the
// restart failed (the process then carries on with the slower kernels).
// WB_ASSUME_BLAS_CORE=NAME makes this process believe OpenBLAS chose NAME (tests use it to exercise
// the restart on machines where OpenBLAS chooses well).
void restart_with_better_blas_core(char** argv);

}  // namespace engine
