// How many bytes one decoded token reads from memory: the basis of `bench`'s GB/s figures.
#pragma once

#include <cstdint>

#include "engine/model.h"

namespace wb::cli {

struct DecodeTraffic {
  double weight_bytes = 0;  // every parameter a single-token forward reads, in its stored encoding
  double kv_bytes = 0;      // keys and values attended over, averaged over the tokens of the run
  double total() const { return weight_bytes + kv_bytes; }
};

// The bytes read per token by a decode run of `n_gen` tokens from an empty cache, each step advancing
// `parallel` sequences together (their weight reads are shared, so they count once per step).
// Every matrix is read whole except the embedding tables that are only looked up (wpe, and wte when
// the head is not tied to it): one row of those. Token i of the run attends over i + 1 cached
// positions, so the KV cache contributes layers * 2 * kv_width * 4 bytes * (n_gen + 1) / 2 per token.
DecodeTraffic decode_traffic(const engine::Model& model, int n_gen, int parallel);

}  // namespace wb::cli
