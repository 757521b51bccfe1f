// WeightRef: one linear weight matrix (OC, C), row-major, as a kernel reads it, in whichever
// encoding it is stored: f32 in the model's arena, or f16 / q8_0 / q4_0 / q4_K / q6_K straight
// from a memory-mapped GGUF file (layouts in engine/quant.h). The pointer is borrowed: the Model
// that handed it out keeps the memory alive.
#pragma once

#include "engine/dtype.h"

namespace engine {

struct WeightRef {
  DType dtype = DType::F32;
  const void* data = nullptr;  // OC rows of dtype_bytes(dtype, C) bytes each
  // Optional: the same q8_0 / q4_0 values in the row-interleaved x8 layout (quant.h pack_x8), which
  // the CPU kernels prefer; null when the loader made none (other encodings, OC < 8, tests).
  const void* x8 = nullptr;

  // The f32 view, or null for any other encoding.
  const float* f32() const { return dtype == DType::F32 ? static_cast<const float*>(data) : nullptr; }
};

}  // namespace engine
