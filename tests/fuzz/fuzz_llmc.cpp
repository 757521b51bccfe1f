// libFuzzer target: llm.c GPT-2 checkpoints (engine/src/io/llmc_checkpoint.cpp), which are read
// from a path: the input is handed over as an in-memory file. Any byte string must end in a
// checkpoint whose 16 tensors have the sizes its header implies, or an engine::Error.
#include <cstddef>
#include <cstdint>

#include "engine/error.h"
#include "engine/io/llmc_checkpoint.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const wb_fuzz::MemoryFile file(wb_fuzz::as_text(data, size), "fuzz.bin");
  try {
    const engine::io::LlmcCheckpoint c = engine::io::read_llmc_checkpoint(file.path());
    const uint64_t C = c.channels, L = c.num_layers;
    const uint64_t want[16] = {c.padded_vocab_size * C, c.max_seq_len * C, L * C, L * C, L * 3 * C * C, L * 3 * C,
                               L * C * C, L * C, L * C, L * C, L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C};
    uint64_t total = 0;
    for (int i = 0; i < 16; ++i) {
      if (c.tensors[i].size() != want[i]) __builtin_trap();
      total += want[i];
    }
    if (total * 2 + 1024 > size) __builtin_trap();  // at least 2 bytes per parameter were in the file
  } catch (const engine::Error&) {
  }
  return 0;
}
