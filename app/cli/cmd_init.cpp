// `init`: writes a new model with random weights (GPT-2 initialisation) as a Hugging Face directory.
// Used to make the starter model at build time and GPT-2-124M / TinyLlama-1.1B-shaped models for
// benchmarks (llama-1b: 22 layers, 2048 wide, 5632 MLP, 32 heads over 4 key/value heads, vocab 32000,
// untied head, as TinyLlama-1.1B). --arch/--layers/--width/--heads/--kv-heads/--ffn reshape a preset and
// --vocab tokenizer sizes the vocabulary to a trained tokenizer (the starter recipe, scripts/make-starter.sh).
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
      {"vocab", true, false,
       "vocabulary size override (e.g. 50257 to pair a Llama shape with the GPT-2 tokenizer), or 'tokenizer': "
       "the size of the --tokenizer's vocabulary"},
      {"arch", true, false, "gpt2 or llama: overrides the preset's architecture (keeps its sizes)"},
      {"layers", true, false, "number of transformer blocks (overrides the preset)"},
      {"width", true, false, "embedding width (overrides the preset)"},
      {"heads", true, false, "attention heads (overrides the preset)"},
      {"kv-heads", true, false, "llama: key/value heads, dividing --heads (default: the preset's, or --heads)"},
      {"ffn", true, false, "MLP hidden size (default 4 x width for gpt2, the preset's for llama)"},
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
  if (a.has("arch")) {
    const std::string arch = a.str("arch");
    if (arch != "gpt2" && arch != "llama") throw UsageError("unknown --arch '" + arch + "' (gpt2 or llama)");
    if ((arch == "llama") != llama) {
      llama = arch == "llama";
      c.arch = llama ? engine::Arch::Llama : engine::Arch::GPT2;
      if (llama) {
        c.norm_eps = 1e-5f;
        c.rope_theta = 10000.0f;
        c.tie_embeddings = true;  // small models: the embedding is most of the parameters, share it
      }
    }
  }
  const bool reshaped = a.has("width") || a.has("heads");
  c.n_layer = static_cast<int>(a.integer("layers", c.n_layer, 1, 1024));
  c.n_embd = static_cast<int>(a.integer("width", c.n_embd, 8, 1 << 16));
  c.n_head = static_cast<int>(a.integer("heads", c.n_head, 1, 1024));
  if (c.n_embd % c.n_head != 0) throw UsageError("--width must be a multiple of --heads");
  if ((c.n_embd / c.n_head) % 2 != 0) throw UsageError("the head size (width / heads) must be even");
  c.max_seq_len = static_cast<int>(a.integer("context", c.max_seq_len, 1, 1 << 20));
  if (a.str("vocab") == "tokenizer") {
    if (!a.has("tokenizer")) throw UsageError("--vocab tokenizer needs --tokenizer DIR");
    c.vocab_size = engine::load_model_tokenizer(a.str("tokenizer"))->vocab_size();
  } else {
    c.vocab_size = static_cast<int>(a.integer("vocab", c.vocab_size, 1, 1 << 22));
  }
  if (!llama) {
    c.n_kv_head = c.n_head;
    c.ffn_dim = static_cast<int>(a.integer("ffn", 4 * c.n_embd, 1, 1 << 20));
  } else {
    c.n_kv_head = static_cast<int>(a.integer("kv-heads", reshaped ? c.n_head : c.n_kv_head, 1, c.n_head));
    if (c.n_head % c.n_kv_head != 0) throw UsageError("--kv-heads must divide --heads");
    // Llama's usual MLP: about 8/3 of the width, a multiple of 32.
    const int default_ffn = reshaped ? (8 * c.n_embd / 3 + 31) / 32 * 32 : c.ffn_dim;
    c.ffn_dim = static_cast<int>(a.integer("ffn", default_ffn, 1, 1 << 20));
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
