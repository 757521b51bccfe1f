// The public entry points of the x8 kernels (quant.h): argument checks, the activations in the form
// the encoding's kernels read, and one call of the kernel set dtype_traits picked for this build
// (x8_kernels.h). Nothing here loops over rows or blocks.
#include <string>
#include <vector>

#include "dtype_traits.h"

namespace engine {
using namespace quant_detail;

namespace {

const X8Traits& x8_traits(DType t, const char* what) {
  const X8Traits* x8 = dtype_traits(t).x8;
  if (!x8) throw Error(std::string(what) + ": no x8 kernel for " + std::string(dtype_name(t)));
  return *x8;
}

// qu[i] = q[i] + 128 as an unsigned byte (q6_K's activation operand). Plain pointers, so the loop
// vectorises: through a vector member every byte store could alias the member's data pointer.
void offset_act_bytes(const int8_t* q, uint8_t* qu, size_t n) {
  for (size_t i = 0; i < n; ++i) qu[i] = static_cast<uint8_t>(static_cast<uint8_t>(q[i]) ^ 0x80u);
}

// Per 32-block of q: the sums of its two halves of 16, as int16 pairs in one int32 (|sum| <= 16*128).
void half_block_sums(const int8_t* q, int32_t* out, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    int32_t lo = 0, hi = 0;
    for (int j = 0; j < k_qblock / 2; ++j) {
      lo += q[b * k_qblock + j];
      hi += q[b * k_qblock + k_qblock / 2 + j];
    }
    out[b] = static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xffffu) | (static_cast<uint32_t>(hi) << 16));
  }
}

}  // namespace

bool has_x8_layout(DType t) { return dtype_traits(t).x8 != nullptr; }

int x8_block_weights(DType t) { return x8_traits(t, "x8_block_weights").block_weights; }

bool x8_worth_packing(DType t) {
  const X8Traits* x8 = dtype_traits(t).x8;
  return x8 && x8->worth_packing;
}

void prepare_act_x8(DType t, q8_act& act) {
  const X8Traits* x8 = dtype_traits(t).x8;
  if (!x8 || !x8->unsigned_act) return;
  act.qu.resize(act.q.size());
  offset_act_bytes(act.q.data(), act.qu.data(), act.q.size());
  act.half_sums.resize(act.q.size() / k_qblock);
  half_block_sums(act.q.data(), act.half_sums.data(), act.half_sums.size());
}

void matmul_x8(DType t, float* out, const void* P, const q8_act& X, int N, int64_t OC, int64_t group_begin,
               int64_t group_end) {
  const X8Traits& x8 = x8_traits(t, "matmul_x8");
  require_multiple(X.C, x8.block_weights, "matmul_x8");
  if (N < 1 || OC < 0 || group_begin < 0 || group_begin > group_end || group_end > OC / k_x8_rows ||
      X.q.size() != static_cast<size_t>(N) * static_cast<size_t>(X.C))
    throw Error("matmul_x8: bad shape, row group range or activation count");
  ActRows rows{X.q.data(), X.d.data(), X.sum.data(), X.C / k_qblock};
  if (x8.unsigned_act) {
    // The activations as unsigned bytes: from prepare_act_x8 (once per product, for every thread and
    // row group) or else this call's own copy. Flipping in a general register on the way to each
    // broadcast instead (no copy) ran 12 % slower: a broadcast from a register takes the shuffle
    // port, one from memory only a load.
    if (X.qu.size() == X.q.size()) {
      rows.qu = X.qu.data();
    } else {
      thread_local std::vector<uint8_t> qu;
      qu.resize(X.q.size());
      offset_act_bytes(X.q.data(), qu.data(), qu.size());
      rows.qu = qu.data();
    }
    if (X.half_sums.size() == X.q.size() / k_qblock) {
      rows.half_sums = X.half_sums.data();
    } else {
      thread_local std::vector<int32_t> half_sums;
      half_sums.resize(X.q.size() / k_qblock);
      half_block_sums(X.q.data(), half_sums.data(), half_sums.size());
      rows.half_sums = half_sums.data();
    }
  }
  x8.matmul(out, P, rows, N, OC, group_begin, group_end);
}

}  // namespace engine
