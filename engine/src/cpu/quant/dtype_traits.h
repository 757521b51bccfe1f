// What the CPU kernels know about each weight encoding, as one row of a table per dtype (internal).
//
// Every place that used to switch on DType to pick a kernel (row widening, the finiteness scan, the
// int8 matvec, the x8 packing and its product, the f16 panels) reads this row instead, so a new
// encoding is one new row (dtype_traits.cpp) plus its kernels, and no dispatch site changes. The
// byte format itself (name, block size, bytes per block) is the backend-neutral table in
// backend/dtype.cpp; this one holds only what the CPU backend does with those bytes.
//
// The entries are plain function pointers taken once per call of a public entry point (one matmul,
// one packing, one row range); the loops over rows and blocks stay inside the kernels, inlined.
#pragma once

#include <cstdint>

#include "engine/dtype.h"
#include "engine/quant.h"
#include "x8_kernels.h"

namespace engine::quant_detail {

// n elements (whole blocks) at src widened to f32.
using WidenFn = void (*)(const void* src, float* dst, int64_t n);
// Index of the first of n elements whose scale or value is inf / nan, or -1 (first_nonfinite).
using NonfiniteFn = int64_t (*)(const void* W, int64_t n);
// out[o] = dot(W[o], x) for o in [row_begin, row_end), x already rounded to int8 (quant.h).
using ActMatvecFn = void (*)(float* out, const void* W, const q8_act& x, int64_t row_begin, int64_t row_end);
// out[o] = dot(W[o], x) for o in [row_begin, row_end), x in f32 (no rounding).
using FloatMatvecFn = void (*)(float* out, const void* W, const float* x, int C, int64_t row_begin, int64_t row_end);
// The x8 layout: rows [0, OC / 8 * 8) of W (OC, C) packed into dst.
using PackFn = void (*)(const void* W, int64_t OC, int C, void* dst);

// An encoding with a row-interleaved x8 copy (quant.h).
struct X8Traits {
  int block_weights;     // weights of one row that one x8 block spans: 32, or 256 for the K types
  uint64_t block_bytes;  // bytes of one x8 block (8 rows)
  bool worth_packing;    // this build's x8 kernels beat its file-layout ones (x8_worth_packing)
  bool unsigned_act;     // the kernels read the activations as unsigned bytes, act.qu (prepare_act_x8)
  PackFn pack;
  X8GroupsFn matmul;  // this build's instruction set's kernel (x8_kernels.h)
};

// An encoding with the f16 column-panel copy (quant.h).
struct PanelTraits {
  // out[n * OC + r] for rows r of panels [panel_begin, panel_end) and the N rows of X (f32).
  void (*matmul)(float* out, const void* P, const float* X, int N, int C, int64_t OC, int64_t panel_begin,
                 int64_t panel_end);
  FloatMatvecFn matvec_rows;  // the rows after the last whole panel, from the row layout
};

struct DTypeTraits {
  WidenFn widen;  // dequantize_rows, and the tiles of the sgemm prefill
  NonfiniteFn first_nonfinite;
  ActMatvecFn matvec_act;      // nullptr: decode widens like prefill (f32, bf16) or has matvec_float
  FloatMatvecFn matvec_float;  // nullptr: no f32-activation decode kernel (only f16 has one)
  const X8Traits* x8;          // nullptr: no x8 layout
  const PanelTraits* panels;   // nullptr: no column panels
};

// The row of t; throws engine::Error for a value outside the enum.
const DTypeTraits& dtype_traits(DType t);

// --- the functions the rows point at, beside the public per-type kernels of quant.h ---
void widen_f32(const void* src, float* dst, int64_t n);
void widen_f16(const void* src, float* dst, int64_t n);
void widen_bf16(const void* src, float* dst, int64_t n);
int64_t first_nonfinite_f32(const void* W, int64_t n);
int64_t first_nonfinite_f16(const void* W, int64_t n);
int64_t first_nonfinite_bf16(const void* W, int64_t n);
int64_t first_nonfinite_q8_0(const void* W, int64_t n);
int64_t first_nonfinite_q4_0(const void* W, int64_t n);
int64_t first_nonfinite_q4_K(const void* W, int64_t n);
int64_t first_nonfinite_q6_K(const void* W, int64_t n);
int64_t first_nonfinite_q4_1(const void* W, int64_t n);
int64_t first_nonfinite_q5_0(const void* W, int64_t n);
int64_t first_nonfinite_q5_1(const void* W, int64_t n);
int64_t first_nonfinite_q5_K(const void* W, int64_t n);
void pack_x8_q8_0(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q4_0(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q4_K(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q6_K(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q4_1(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q5_0(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q5_1(const void* W, int64_t OC, int C, void* dst);
void pack_x8_q5_K(const void* W, int64_t OC, int C, void* dst);

}  // namespace engine::quant_detail
