// The CPU kernels' table, one row per dtype (dtype_traits.h), in the order of the DType enum.
//
// The x8 product kernel of each encoding is chosen here, at compile time, from the widest set this
// build's instruction set allows (x8_kernels.h); q4_K and q6_K are packed only where that set is a
// SIMD one, since without AVX2 their file-layout matvecs run faster than the portable x8 loops
// (which exist for correctness). q5_K follows q4_K; the 32-weight types follow q4_0.
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
// q4_1 / q5_0 / q5_1 / q5_K have no 512-bit kernels: an AVX-512 build runs their 256-bit ones.
#if defined(WB_QUANT_AVX2)
namespace x8_set256 = x8_avx2;
#else
namespace x8_set256 = x8_portable;
#endif

constexpr X8Traits k_x8_q8_0{k_qblock, sizeof(block_q8_0x8), true, false, pack_x8_q8_0, x8_set::matmul_q8_0};
constexpr X8Traits k_x8_q4_0{k_qblock, sizeof(block_q4_0x8), true, false, pack_x8_q4_0, x8_set::matmul_q4_0};
constexpr X8Traits k_x8_q4_K{k_kblock, sizeof(block_q4_Kx8), k_x8_simd, false, pack_x8_q4_K, x8_set::matmul_q4_K};
// The SIMD q6_K kernels take the activations as the unsigned operand (x8_kernels.h); the portable
// loop reads the signed quants.
constexpr X8Traits k_x8_q6_K{k_kblock, sizeof(block_q6_Kx8), k_x8_simd, k_x8_simd, pack_x8_q6_K, x8_set::matmul_q6_K};
constexpr X8Traits k_x8_q4_1{k_qblock, sizeof(block_q4_1x8), true, false, pack_x8_q4_1, x8_set256::matmul_q4_1};
constexpr X8Traits k_x8_q5_0{k_qblock, sizeof(block_q5_0x8), true, false, pack_x8_q5_0, x8_set256::matmul_q5_0};
constexpr X8Traits k_x8_q5_1{k_qblock, sizeof(block_q5_1x8), true, false, pack_x8_q5_1, x8_set256::matmul_q5_1};
constexpr X8Traits k_x8_q5_K{k_kblock, sizeof(block_q5_Kx8), k_x8_simd, false, pack_x8_q5_K, x8_set256::matmul_q5_K};

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
    {dequantize_row_q4_1, first_nonfinite_q4_1, matvec_q4_1_act, nullptr, &k_x8_q4_1, nullptr},
    {dequantize_row_q5_0, first_nonfinite_q5_0, matvec_q5_0_act, nullptr, &k_x8_q5_0, nullptr},
    {dequantize_row_q5_1, first_nonfinite_q5_1, matvec_q5_1_act, nullptr, &k_x8_q5_1, nullptr},
    {dequantize_row_q5_K, first_nonfinite_q5_K, matvec_q5_K_act, nullptr, &k_x8_q5_K, nullptr},
};
static_assert(static_cast<int>(DType::F32) == 0 && static_cast<int>(DType::F16) == 1 &&
                  static_cast<int>(DType::BF16) == 2 && static_cast<int>(DType::Q8_0) == 3 &&
                  static_cast<int>(DType::Q4_0) == 4 && static_cast<int>(DType::Q4_K) == 5 &&
                  static_cast<int>(DType::Q6_K) == 6 && static_cast<int>(DType::Q4_1) == 7 &&
                  static_cast<int>(DType::Q5_0) == 8 && static_cast<int>(DType::Q5_1) == 9 &&
                  static_cast<int>(DType::Q5_K) == 10 && std::size(k_traits) == 11,
              "k_traits rows follow the DType enum, one per value");

}  // namespace

const DTypeTraits& dtype_traits(DType t) {
  const auto i = static_cast<size_t>(t);
  if (i >= std::size(k_traits)) throw Error("dtype_traits: unknown dtype " + std::to_string(i));
  return k_traits[i];
}

}  // namespace engine::quant_detail
