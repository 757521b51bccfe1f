// llm.c GPT-2 checkpoint (gpt2_124M.bin) reader and writer.
//
// Layout (llm.c train_gpt2.c): 256 x int32 header: [0]=20240326 magic, [1]=version (3 = fp32,
// 5 = bf16), [2]=max_seq_len, [3]=vocab_size, [4]=num_layers, [5]=num_heads, [6]=channels,
// [7]=padded_vocab_size; then the 16 parameter tensors back to back, in this order and shape:
//   wte (Vp,C) wpe (maxT,C) ln1w (L,C) ln1b (L,C) qkvw (L,3C,C) qkvb (L,3C) attprojw (L,C,C)
//   attprojb (L,C) ln2w (L,C) ln2b (L,C) fcw (L,4C,C) fcb (L,4C) fcprojw (L,C,4C) fcprojb (L,C)
//   lnfw (C) lnfb (C)
// The reader checks the header values are positive and sane, that sizes do not overflow, and that the
// file holds exactly the bytes the header implies.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace engine::io {

struct LlmcCheckpoint {
  int max_seq_len = 0, vocab_size = 0, padded_vocab_size = 0, num_layers = 0, num_heads = 0, channels = 0;
  // The 16 tensors in the order above, as f32 (bf16 files are widened).
  std::array<std::vector<float>, 16> tensors;
};

LlmcCheckpoint read_llmc_checkpoint(const std::string& path);                     // throws engine::Error
void write_llmc_checkpoint(const std::string& path, const LlmcCheckpoint& ckpt);  // version 3 (fp32), atomic

}  // namespace engine::io
