// Quantized weight formats (GGUF/ggml block layouts) and the CPU kernels that use them.
//
// Layouts, all little-endian, blocks packed back to back with no padding:
//   q8_0 (32 weights, 34 bytes):  f16 d, int8 q[32];                     w = d*q
//   q4_0 (32 weights, 18 bytes):  f16 d, uint8 qs[16];                   w = d*(nibble-8)
//        byte j holds weight j in its low nibble and weight j+16 in its high nibble.
//   q4_K (256 weights, 144 bytes): f16 d, f16 dmin, uint8 scales[12], uint8 qs[128];
//        8 sub-blocks of 32 with 6-bit scale sc and 6-bit min m:  w = d*sc*q - dmin*m
//   q6_K (256 weights, 210 bytes): uint8 ql[128], uint8 qh[64], int8 scales[16], f16 d;
//        16 sub-blocks of 16 with int8 scale:                  w = d*scale*(q6-32)
//   q4_1 (32 weights, 20 bytes):  f16 d, f16 m, uint8 qs[16];            w = d*nibble + m
//        (nibbles placed as in q4_0).
//   q5_0 (32 weights, 22 bytes):  f16 d, uint8 qh[4], uint8 qs[16];      w = d*(q5-16)
//        q5 = nibble (as q4_0) | bit j of the little-endian 32-bit qh << 4, for weight j.
//   q5_1 (32 weights, 24 bytes):  f16 d, f16 m, uint8 qh[4], uint8 qs[16]; w = d*q5 + m
//   q5_K (256 weights, 176 bytes): f16 d, f16 dmin, uint8 scales[12], uint8 qh[32], uint8 qs[128];
//        q4_K's scales, mins and nibbles, plus a fifth bit: bit j of qh[l] for weight l of sub-block j.
//                                                                w = d*sc*q5 - dmin*m
//
// Invariants: element counts passed here are whole blocks (a multiple of 32, or 256 for K types);
// anything else throws engine::Error rather than reading a partial block. Block pointers need only
// 2-byte alignment (GGUF aligns tensor data to 32, and every block size is even).
//
// Matrix layout for the kernels: W is (OC, C) row-major, each row C/32 blocks (or C f16 values),
// so row o starts at byte o * row_bytes(type, C). Kernels write out[o] for o in [row_begin, row_end)
// only, so a thread pool can split rows between threads with no shared writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/dtype.h"

namespace engine {

inline constexpr int k_qblock = 32;   // weights per q8_0 / q4_0 block
inline constexpr int k_kblock = 256;  // weights per q4_K / q6_K super-block
inline constexpr size_t k_q8_0_bytes = 34;
inline constexpr size_t k_q4_0_bytes = 18;
inline constexpr size_t k_q4_K_bytes = 144;
inline constexpr size_t k_q6_K_bytes = 210;
inline constexpr size_t k_q4_1_bytes = 20;
inline constexpr size_t k_q5_0_bytes = 22;
inline constexpr size_t k_q5_1_bytes = 24;
inline constexpr size_t k_q5_K_bytes = 176;

// --- quantize (f32 -> blocks), exactly as ggml's reference quantizers round ---
// n must be a multiple of 32. dst receives n/32 blocks.
void quantize_row_q8_0(const float* src, void* dst, int64_t n);
void quantize_row_q4_0(const float* src, void* dst, int64_t n);
// Our own rounding (quantize_q4_1_q5.cpp: each block's grid covers its values, each value takes the
// nearest grid point); n a multiple of 32, or of 256 for q5_K.
void quantize_row_q4_1(const float* src, void* dst, int64_t n);
void quantize_row_q5_0(const float* src, void* dst, int64_t n);
void quantize_row_q5_1(const float* src, void* dst, int64_t n);
void quantize_row_q5_K(const float* src, void* dst, int64_t n);

// --- dequantize (blocks -> f32) ---
void dequantize_row_q8_0(const void* src, float* dst, int64_t n);  // n % 32 == 0
void dequantize_row_q4_0(const void* src, float* dst, int64_t n);  // n % 32 == 0
void dequantize_row_q4_K(const void* src, float* dst, int64_t n);  // n % 256 == 0
void dequantize_row_q6_K(const void* src, float* dst, int64_t n);  // n % 256 == 0
void dequantize_row_q4_1(const void* src, float* dst, int64_t n);  // n % 32 == 0
void dequantize_row_q5_0(const void* src, float* dst, int64_t n);  // n % 32 == 0
void dequantize_row_q5_1(const void* src, float* dst, int64_t n);  // n % 32 == 0
void dequantize_row_q5_K(const void* src, float* dst, int64_t n);  // n % 256 == 0

// --- activations quantized once per matvec, shared by every weight row ---
// x is rounded to int8 per 32-element block with an f32 scale (finer than ggml's f16 activation
// scale; costs nothing since it never leaves memory). sum[b] = sum of q in block b, which lets the
// q4_0 kernel fold the "-8" offset out of its inner loop.
struct q8_act {
  int C = 0;
  std::vector<int8_t> q;     // C values
  std::vector<float> d;      // C/32 scales
  std::vector<int32_t> sum;  // C/32 block sums of q
  // q + 128 as unsigned bytes, for q6_K's SIMD kernels (its activations are the unsigned operand),
  // and per 32-block the sums of q over its two halves of 16 as int16 pairs in one int32 (low: the
  // first half), for the 256-bit q6_K decode without VNNI (whose weights are the unsigned operand);
  // filled by prepare_act_x8, emptied whenever q is rewritten so they can never be stale.
  std::vector<uint8_t> qu;
  std::vector<int32_t> half_sums;
};
void quantize_act_q8(const float* x, int C, q8_act& out);

// --- matrix-vector: out[o] = dot(W[o], x) for o in [row_begin, row_end) ---
// The q8_0/q4_0 forms quantize x themselves (into a thread-local buffer); the *_act forms take x
// already quantized so one quantization serves every thread and every matrix that shares x.
// The f16 form takes W as raw IEEE half bits and accumulates in f32 (no activation rounding).
void matvec_q8_0(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end);
void matvec_q4_0(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end);
void matvec_f16(float* out, const uint16_t* W, const float* x, int C, int64_t row_begin, int64_t row_end);
void matvec_q8_0_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
void matvec_q4_0_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
// K types (C a multiple of 256), for GGUF files as downloaded (Q4_K_M mixes q4_K and q6_K).
// Integer dots per 32 (q4_K) / 16 (q6_K) sub-block against the same int8 activations (AVX2/VNNI
// with a portable fallback), one row at a time: not yet as tuned as q4_0.
void matvec_q4_K(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end);
void matvec_q6_K(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end);
void matvec_q4_K_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
void matvec_q6_K_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
// q4_1 / q5_0 / q5_1 / q5_K in the file layout, what llama-quantize writes beside q4_K / q6_K (Q5_K_M,
// and Q4_K_M's fallback for rows that are not whole 256-weight blocks). Portable integer loops: with
// the x8 copy the loader makes, they serve only the last OC % 8 rows and unpacked weights.
void matvec_q4_1_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
void matvec_q5_0_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
void matvec_q5_1_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
void matvec_q5_K_act(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);

// --- matrix-matrix (prefill): out[n*OC + o] = dot(W[o], X[n]) for n in [0,N), o in [row_begin, row_end) ---
// X is (N, C) row-major f32, out is (N, OC) row-major, W (OC, C) in encoding t (any dtype; C a
// whole number of t's blocks). Weight rows are dequantized in tiles to f32 and multiplied with BLAS
// sgemm, so results are the exact dequantized weights times X in f32 (no activation rounding,
// unlike matvec). Single-threaded inside apart from what BLAS does.
void matmul_typed(float* out, DType t, const void* W, const float* X, int N, int C, int64_t OC, int64_t row_begin,
                  int64_t row_end);

// --- row-interleaved ("x8") copies of q8_0 / q4_0 weights, for the CPU kernels ---
// A file's layout keeps each row's blocks together, so a kernel computing one output per row must
// reduce 8 int32 lanes to one number per block and load each row's scale separately. The x8 layout
// stores 8 rows' block b side by side: their 8 f16 scales, then their quants interleaved 4 bytes at
// a time (qs[32c + 4r + i] = row r's qs[4c + i]). One 32-byte load then holds the same 4 positions
// of 8 rows, a broadcast of 4 activation bytes multiplies all of them, and the 8 int32 lanes are
// already the 8 rows' sums: no horizontal reduction, one vector scale load per block. llama.cpp
// repacks q4_0 the same way for its AVX2 kernels (its "q4_0_8x8"); this is our own layout.
// q4_K has an x8 form too: per super-block the 8 rows' d and dmin, their sub-block scales and mins
// unpacked from 6 bits to bytes, and the nibbles interleaved the same way per 32-byte chunk; and
// q6_K: per super-block the 8 rows' d and int8 scales, then their 6-bit values three bytes for four
// (quant_blocks.h; no wider than the file). q4_1 / q5_0 / q5_1 interleave like q4_0, with the 8 rows'
// mins beside their scales and the fifth bits regrouped so each 32-byte chunk's are one shift away;
// q5_K is q4_K's x8 form plus its fifth bits interleaved like the nibbles.
// Only the first OC / 8 * 8 rows are packed; the kernels' callers handle the remaining rows from
// the original layout. Every weight keeps its exact value; only where its bits sit differs.
inline constexpr int k_x8_rows = 8;
// The encodings with an x8 form, and how many weights one of their x8 blocks spans per row
// (x8_block_weights throws for an encoding without one).
bool has_x8_layout(DType t);
int x8_block_weights(DType t);
// Whether the loader should pack weights of encoding t: the 32-weight types always; the K types where
// this build has SIMD kernels for them (AVX2 or AVX-512; without AVX2 the file-layout kernels are faster than
// the portable x8 loop, which exists for correctness).
bool x8_worth_packing(DType t);
// Bytes of the packed copy of W (OC, C) in encoding t (any has_x8_layout type), overflow-checked.
uint64_t x8_bytes(DType t, int64_t OC, int C);
// dst (x8_bytes) = rows [0, OC / 8 * 8) of W in the x8 layout.
void pack_x8(DType t, const void* W, int64_t OC, int C, void* dst);
// x quantized per row: X (N, C) -> q (N*C), d and sum (N*C/32), C = row width.
void quantize_act_q8_rows(const float* X, int N, int C, q8_act& out);
// The pieces of quantize_act_q8_rows, for callers that split the blocks over threads: size `out`
// for N rows of width C (checked), then quantize nb blocks of x into q (nb*32), d and sum (nb each).
void resize_act_q8(int N, int C, q8_act& out);
void quantize_act_blocks(const float* x, int64_t nb, int8_t* q, float* d, int32_t* sum);
// Readies quantized activations for matmul_x8 over weights of encoding t, once for every thread and
// row group of the product: q6_K's SIMD kernels take them as unsigned bytes (act.qu) and half-block
// sums (act.half_sums); every other case needs nothing. Optional: without it matmul_x8 builds them
// itself, on every call.
void prepare_act_x8(DType t, q8_act& act);
// out[n * OC + r] for rows r of groups [group_begin, group_end) (r = 8 * group + lane) and the N
// rows of X (quantized by quantize_act_q8_rows): the integer product over the packed weights P.
// N == 1 is the decode matvec; N > 1 the prefill product, 4 tokens per weight unpack.
void matmul_x8(DType t, float* out, const void* P, const q8_act& X, int N, int64_t OC, int64_t group_begin,
               int64_t group_end);

// --- f16 weights in column panels, for the CPU kernels ---
// Panel p holds rows [16p, 16p + 16) column by column: P[(p * C + k) * 16 + j] = W[16p + j][k].
// One 32-byte read then gives the 16 rows' weights for column k, which is what a register-tiled
// outer product (prefill) and a single sequential stream (decode) want; values are bit-identical.
// Only the first OC / 16 * 16 rows are packed; callers handle the rest from the row layout.
inline constexpr int k_panel_rows = 16;
uint64_t f16_panel_bytes(int64_t OC, int C);  // overflow-checked
void pack_f16_panels(const uint16_t* W, int64_t OC, int C, uint16_t* dst);
// out[n * OC + r] for rows r of panels [panel_begin, panel_end) and the N rows of X (f32, no
// rounding): X (N, C) times the packed weights, accumulated in f32.
void matmul_f16_panels(float* out, const uint16_t* P, const float* X, int N, int C, int64_t OC, int64_t panel_begin,
                       int64_t panel_end);

// --- any dtype, whole rows: the row-at-a-time form the kernels above share ---
// dst (rows, C) = rows [row_begin, row_begin + rows) of W (OC, C) in encoding t, widened to f32.
// C must be a whole number of t's blocks.
void dequantize_rows(DType t, const void* W, int C, int64_t row_begin, int64_t rows, float* dst);

// Index of the first element of the first block whose scale (q8_0/q4_0/q5_0/q6_K: d; q4_1/q5_1: d, m;
// q4_K/q5_K: d, dmin) or value (f16/bf16/f32) is inf or nan, or -1 when every weight is finite. Scans
// only scales for block types: with finite scales every weight of those formats is finite. n: element
// count (a multiple of the block).
int64_t first_nonfinite(DType t, const void* W, int64_t n);

}  // namespace engine
