// `init`: writes a new model with random weights (GPT-2 initialisation) as a Hugging Face directory.
// Used to make the starter model at build time and GPT-2-124M / TinyLlama-1.1B-shaped models for
// benchmarks (llama-1b: 22 layers, 2048 wide, 5632 MLP, 32 heads over 4 key/value heads, vocab 32000,
// untied head, as TinyLlama-1.1B).
#include <iostream>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/model_loader.h"

namespace wb::cli {

int cmd_init(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = {
      {"preset", true, false,
       "starter (4 layers, 128 wide), gpt2-124m, tiny (vocab 512), llama-1b (TinyLlama-1.1B shape), or tiny-llama"},
      {"out", true, false, "output directory"},
      {"seed", true, false, "initialisation seed (default 1)"},
      {"tokenizer", true, false, "directory whose vocab.json/merges.txt or tokenizer.json are copied"},
      {"context", true, false, "context length override"},
      {"vocab", true, false, "vocabulary size override (e.g. 50257 to pair a Llama shape with the GPT-2 tokenizer)"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string preset = a.str("preset", "starter");
  engine::ModelConfig c;
  c.arch = engine::Arch::GPT2;
  bool llama = false;
  if (preset == "llama-1b" || preset == "tiny-llama") {
    llama = true;
    c.arch = engine::Arch::Llama;
    c.norm_eps = 1e-5f;
    c.rope_theta = 10000.0f;
    c.tie_embeddings = false;
    if (preset == "llama-1b")
      c.n_layer = 22, c.n_embd = 2048, c.ffn_dim = 5632, c.n_head = 32, c.n_kv_head = 4, c.vocab_size = 32000,
      c.max_seq_len = 2048;
    else
      c.n_layer = 2, c.n_embd = 64, c.ffn_dim = 160, c.n_head = 4, c.n_kv_head = 2, c.vocab_size = 512,
      c.max_seq_len = 64;
  } else if (preset == "starter") {
    c.n_layer = 4, c.n_embd = 128, c.n_head = 4, c.vocab_size = 50257, c.max_seq_len = 512;
  } else if (preset == "gpt2-124m") {
    c.n_layer = 12, c.n_embd = 768, c.n_head = 12, c.vocab_size = 50257, c.max_seq_len = 1024;
  } else if (preset == "tiny") {
    c.n_layer = 2, c.n_embd = 64, c.n_head = 4, c.vocab_size = 512, c.max_seq_len = 64;
  } else {
    throw UsageError("unknown --preset '" + preset + "' (starter, gpt2-124m, tiny, llama-1b, tiny-llama)");
  }
  c.max_seq_len = static_cast<int>(a.integer("context", c.max_seq_len, 1, 1 << 20));
  c.vocab_size = static_cast<int>(a.integer("vocab", c.vocab_size, 1, 1 << 22));
  if (!llama) {
    c.n_kv_head = c.n_head;
    c.ffn_dim = 4 * c.n_embd;
  }
  const std::string out = a.required("out");
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 1, 0, INT64_MAX));
  engine::Model model(c);
  model.init_random(seed);
  const nlohmann::json prov = {{"created_by", "llm-workbench-cli init"},
                               {"preset", preset},
                               {"seed", seed},
                               {"weights", "random initialisation (untrained)"}};
  engine::save_hf_directory(model, out, a.str("tokenizer"), prov.dump(2));
  std::cerr << "wrote " << out << " (" << preset << ", " << c.parameter_count() << " parameters, seed " << seed
            << ")\n";
  return 0;
}

}  // namespace wb::cli
