// The CPU kernels' table, one row per dtype (dtype_traits.h), in the order of the DType enum.
//
// The x8 product kernel of each encoding is chosen here, at compile time, from the widest set this
// build's instruction set allows (x8_kernels.h); q4_K and q6_K are packed only where that set is a
// SIMD one, since without AVX2 their file-layout matvecs run faster than the portable x8 loops
// (which exist for correctness).
#include "dtype_traits.h"

#include <iterator>
#include <string>

namespace engine::quant_detail {

namespace {

#if defined(WB_X8_AVX512)
namespace x8_set = x8_avx512;
constexpr bool k_x8_simd = true;
#elif defined(WB_QUANT_AVX2)
namespace x8_set = x8_avx2;
constexpr bool k_x8_simd = true;
#else
namespace x8_set = x8_portable;
constexpr bool k_x8_simd = false;
#endif

constexpr X8Traits k_x8_q8_0{k_qblock, sizeof(block_q8_0x8), true, false, pack_x8_q8_0, x8_set::matmul_q8_0};
constexpr X8Traits k_x8_q4_0{k_qblock, sizeof(block_q4_0x8), true, false, pack_x8_q4_0, x8_set::matmul_q4_0};
constexpr X8Traits k_x8_q4_K{k_kblock, sizeof(block_q4_Kx8), k_x8_simd, false, pack_x8_q4_K, x8_set::matmul_q4_K};
// The SIMD q6_K kernels take the activations as the unsigned operand (x8_kernels.h); the portable
// loop reads the signed quants.
constexpr X8Traits k_x8_q6_K{k_kblock, sizeof(block_q6_Kx8), k_x8_simd, k_x8_simd, pack_x8_q6_K, x8_set::matmul_q6_K};

void matvec_f16_rows(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end) {
  matvec_f16(out, static_cast<const uint16_t*>(W), x, C, row_begin, row_end);
}

void matmul_f16_panel_range(float* out, const void* P, const float* X, int N, int C, int64_t OC, int64_t panel_begin,
                            int64_t panel_end) {
  matmul_f16_panels(out, static_cast<const uint16_t*>(P), X, N, C, OC, panel_begin, panel_end);
}

constexpr PanelTraits k_panels_f16{matmul_f16_panel_range, matvec_f16_rows};

constexpr DTypeTraits k_traits[] = {
    // F32: decode and prefill both widen (a copy) and run sgemm.
    {widen_f32, first_nonfinite_f32, nullptr, nullptr, nullptr, nullptr},
    // F16: f32 activations throughout, no rounding.
    {widen_f16, first_nonfinite_f16, nullptr, matvec_f16_rows, nullptr, &k_panels_f16},
    // BF16: the GGUF loader widens it at load; here only the generic path.
    {widen_bf16, first_nonfinite_bf16, nullptr, nullptr, nullptr, nullptr},
    {dequantize_row_q8_0, first_nonfinite_q8_0, matvec_q8_0_act, nullptr, &k_x8_q8_0, nullptr},
    {dequantize_row_q4_0, first_nonfinite_q4_0, matvec_q4_0_act, nullptr, &k_x8_q4_0, nullptr},
    {dequantize_row_q4_K, first_nonfinite_q4_K, matvec_q4_K_act, nullptr, &k_x8_q4_K, nullptr},
    {dequantize_row_q6_K, first_nonfinite_q6_K, matvec_q6_K_act, nullptr, &k_x8_q6_K, nullptr},
};
static_assert(static_cast<int>(DType::F32) == 0 && static_cast<int>(DType::F16) == 1 &&
                  static_cast<int>(DType::BF16) == 2 && static_cast<int>(DType::Q8_0) == 3 &&
                  static_cast<int>(DType::Q4_0) == 4 && static_cast<int>(DType::Q4_K) == 5 &&
                  static_cast<int>(DType::Q6_K) == 6 && std::size(k_traits) == 7,
              "k_traits rows follow the DType enum, one per value");

}  // namespace

const DTypeTraits& dtype_traits(DType t) {
  const auto i = static_cast<size_t>(t);
  if (i >= std::size(k_traits)) throw Error("dtype_traits: unknown dtype " + std::to_string(i));
  return k_traits[i];
}

}  // namespace engine::quant_detail
