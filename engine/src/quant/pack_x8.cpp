// Packing q8_0 / q4_0 weights into the x8 layout (quant.h): done once at load, so the kernels in
// matmul_x8.cpp can treat 8 rows as one vector. A plain byte shuffle: every scale and quant keeps
// its bits, so the packed product equals the unpacked one exactly.
#include <cstring>

#include "engine/checked.h"
#include "quant_blocks.h"

namespace engine {
using namespace quant_detail;

namespace {

template <typename Block, typename BlockX8, int Chunks>
void pack_groups(const void* W, int64_t OC, int C, void* dst) {
  const int64_t nb = C / k_qblock;
  const auto* rows = static_cast<const Block*>(W);
  auto* out = static_cast<BlockX8*>(dst);
  for (int64_t g = 0; g < OC / k_x8_rows; ++g)
    for (int64_t b = 0; b < nb; ++b) {
      BlockX8& o = out[g * nb + b];
      for (int r = 0; r < k_x8_rows; ++r) {
        const Block& src = rows[(g * k_x8_rows + r) * nb + b];
        o.d[r] = src.d;
        for (int c = 0; c < Chunks; ++c) std::memcpy(o.qs + 32 * c + 4 * r, src.qs + 4 * c, 4);
      }
    }
}

void check_shape(DType t, int64_t OC, int C) {
  if (t != DType::Q8_0 && t != DType::Q4_0)
    throw Error("x8 layout: no packed form for " + std::string(dtype_name(t)) + " (only q8_0 and q4_0)");
  if (OC < 0) throw Error("x8 layout: negative row count");
  require_multiple(C, k_qblock, "x8 layout");
}

}  // namespace

uint64_t x8_bytes(DType t, int64_t OC, int C) {
  check_shape(t, OC, C);
  const uint64_t block = t == DType::Q8_0 ? sizeof(block_q8_0x8) : sizeof(block_q4_0x8);
  return checked_mul(checked_mul(static_cast<uint64_t>(OC / k_x8_rows), static_cast<uint64_t>(C / k_qblock), "x8 layout"),
                     block, "x8 layout");
}

void pack_x8(DType t, const void* W, int64_t OC, int C, void* dst) {
  check_shape(t, OC, C);
  if (t == DType::Q8_0)
    pack_groups<block_q8_0, block_q8_0x8, 8>(W, OC, C, dst);
  else
    pack_groups<block_q4_0, block_q4_0x8, 4>(W, OC, C, dst);
}

}  // namespace engine
