// dtype names and byte sizes (see engine/dtype.h).
//
// Quantized types are stored in whole blocks, as in GGUF: q8_0 = one f16 scale + 32 int8 (34 bytes),
// q4_0 = one f16 scale + 16 bytes of nibbles (18 bytes), q4_K / q6_K = 256 weights in 144 / 210
// bytes. A count that is not a whole number of blocks cannot be stored and is an error, never rounded.
#include "engine/dtype.h"

#include <string>

#include "engine/checked.h"
#include "engine/error.h"

namespace engine {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
    case DType::Q4_K: return "q4_K";
    case DType::Q6_K: return "q6_K";
  }
  return "unknown";
}

uint64_t dtype_block_elems(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return 1;
    case DType::Q8_0:
    case DType::Q4_0: return 32;
    case DType::Q4_K:
    case DType::Q6_K: return 256;
  }
  throw Error("dtype_block_elems: unknown dtype " + std::to_string(static_cast<int>(t)));
}

bool dtype_is_quantized(DType t) { return dtype_block_elems(t) > 1; }

uint64_t dtype_bytes(DType t, uint64_t n) {
  switch (t) {
    case DType::F32: return checked_mul(n, 4, "f32 tensor size");
    case DType::F16: return checked_mul(n, 2, "f16 tensor size");
    case DType::BF16: return checked_mul(n, 2, "bf16 tensor size");
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q6_K: {
      const std::string name(dtype_name(t));
      const uint64_t block = dtype_block_elems(t);
      const uint64_t block_bytes = t == DType::Q8_0 ? 34 : t == DType::Q4_0 ? 18 : t == DType::Q4_K ? 144 : 210;
      if (n % block != 0)
        throw Error(name + " tensor of " + std::to_string(n) + " elements: not a multiple of the " +
                    std::to_string(block) + "-element block");
      return checked_mul(n / block, block_bytes, (name + " tensor size").c_str());
    }
  }
  throw Error("dtype_bytes: unknown dtype " + std::to_string(static_cast<int>(t)));
}

}  // namespace engine
