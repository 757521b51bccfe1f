// dtype names and byte sizes (see engine/dtype.h).
//
// Quantized types are stored in whole blocks, as in GGUF: q8_0 = one f16 scale + 32 int8 (34 bytes),
// q4_0 = one f16 scale + 16 bytes of nibbles (18 bytes), q4_1 / q5_0 / q5_1 = 32 weights in 20 / 22 / 24
// bytes, q4_K / q5_K / q6_K = 256 weights in 144 / 176 / 210 bytes. A count that is not a whole number of blocks cannot be stored and is an error, never rounded.
#include "engine/dtype.h"

#include <iterator>
#include <string>

#include "engine/checked.h"
#include "engine/error.h"

namespace engine {

namespace {

// One row per dtype, in the order of the DType enum: what a tensor's bytes are, independent of any
// backend (the CPU kernels' own table is cpu/quant/dtype_traits.cpp).
struct DTypeFormat {
  std::string_view name;
  uint64_t block_elems;  // 1 for the float types
  uint64_t block_bytes;
  const char* size_what;  // names the size in an overflow error, without building a string per call
};

constexpr DTypeFormat k_formats[] = {
    {"f32", 1, 4, "f32 tensor size"},       {"f16", 1, 2, "f16 tensor size"},
    {"bf16", 1, 2, "bf16 tensor size"},     {"q8_0", 32, 34, "q8_0 tensor size"},
    {"q4_0", 32, 18, "q4_0 tensor size"},   {"q4_K", 256, 144, "q4_K tensor size"},
    {"q6_K", 256, 210, "q6_K tensor size"},   {"q4_1", 32, 20, "q4_1 tensor size"},
    {"q5_0", 32, 22, "q5_0 tensor size"},   {"q5_1", 32, 24, "q5_1 tensor size"},
    {"q5_K", 256, 176, "q5_K tensor size"},
};
static_assert(static_cast<int>(DType::F32) == 0 && static_cast<int>(DType::F16) == 1 &&
                  static_cast<int>(DType::BF16) == 2 && static_cast<int>(DType::Q8_0) == 3 &&
                  static_cast<int>(DType::Q4_0) == 4 && static_cast<int>(DType::Q4_K) == 5 &&
                  static_cast<int>(DType::Q6_K) == 6 && static_cast<int>(DType::Q4_1) == 7 &&
                  static_cast<int>(DType::Q5_0) == 8 && static_cast<int>(DType::Q5_1) == 9 &&
                  static_cast<int>(DType::Q5_K) == 10 && std::size(k_formats) == 11,
              "k_formats rows follow the DType enum, one per value");

const DTypeFormat* format_of(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < std::size(k_formats) ? &k_formats[i] : nullptr;
}

}  // namespace

std::string_view dtype_name(DType t) {
  const DTypeFormat* f = format_of(t);
  return f ? f->name : "unknown";
}

uint64_t dtype_block_elems(DType t) {
  const DTypeFormat* f = format_of(t);
  if (!f) throw Error("dtype_block_elems: unknown dtype " + std::to_string(static_cast<int>(t)));
  return f->block_elems;
}

bool dtype_is_quantized(DType t) { return dtype_block_elems(t) > 1; }

uint64_t dtype_bytes(DType t, uint64_t n) {
  const DTypeFormat* f = format_of(t);
  if (!f) throw Error("dtype_bytes: unknown dtype " + std::to_string(static_cast<int>(t)));
  if (n % f->block_elems != 0)
    throw Error(std::string(f->name) + " tensor of " + std::to_string(n) + " elements: not a multiple of the " +
                std::to_string(f->block_elems) + "-element block");
  return checked_mul(n / f->block_elems, f->block_bytes, f->size_what);
}

}  // namespace engine
