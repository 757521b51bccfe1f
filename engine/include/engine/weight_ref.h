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
  // Optional: the same values in the layout the CPU kernels prefer (quant.h): q8_0 / q4_0 in the
  // row-interleaved x8 layout (pack_x8), f16 in column panels (pack_f16_panels). Null when the
  // loader made none (other encodings, too few rows, weights built in memory).
  const void* packed = nullptr;

  // The f32 view, or null for any other encoding.
  const float* f32() const { return dtype == DType::F32 ? static_cast<const float*>(data) : nullptr; }
};

}  // namespace engine
