// llm-workbench-cli: the headless entry point (DESIGN.md §5). Every failure prints one line on
// stderr and exits non-zero; no input may crash it.
#include <cstring>
#include <iostream>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "engine/blas_core.h"
#include "engine/error.h"

namespace {

const char* kUsage =
    "usage: llm-workbench-cli COMMAND [flags]\n"
    "commands:\n"
    "  generate   complete a prompt (--model --prompt [--max-tokens --temperature --top-k --top-p --min-p\n"
    "             --repeat-penalty --seed --stop... --top-logprobs --json])\n"
    "  tokenize   show the tokens of a text (--model --text [--json])\n"
    "  tokenizer  tokenizer train --data FILE... --vocab-size N --out DIR: learn a byte-level BPE vocabulary\n"
    "  bench      prefill/decode tokens per second and peak memory (--model [--prompt-tokens --gen-tokens\n"
    "             --threads --memory-bandwidth --json])\n"
    "  init       write a randomly initialised model (--preset starter|gpt2-124m|tiny|tiny-llama|llama-1b --out DIR)\n"
    "  convert    HF directory / GGUF / llm.c .bin -> HF directory or GGUF (--in --out [--to gguf|hf]\n"
    "             [--dtype f32|f16|q8_0|q4_0])\n"
    "  quantize   write a quantized GGUF (--in --out --type q8_0|q4_0)\n"
    "  eval       perplexity on a text file (--model --task perplexity --data [--ctx --reference --json]),\n"
    "             exact-match accuracy on held-out questions (--model --task arith|facts|chat [--data --n --json]),\n"
    "             or a reward model's pair accuracy (--task reward --model RM --data pairs.jsonl)\n"
    "  train      pretrain, fine-tune or align (--recipe pretrain|sft|reward|dpo|grpo|ppo --model --data --out\n"
    "             [--steps --lr --batch --seq --beta --group-size --kl-coef --resume --metrics ...]); one JSON line\n"
    "             per step\n"
    "  data       data synth --kind stories|world|corpus|facts|arith|chat|prefs|prompts --n N --seed S [--split eval]\n"
    "             --out FILE\n"
    "  attention  attention of every layer x head over a prompt (--model --prompt [--layer --head --json --png])\n"
    "  lens       logit lens: each layer's top next tokens per position (--model --prompt [--top-k --json])\n"
    "  serve      an OpenAI-compatible HTTP API with continuous batching (--model [--host --port --api-key\n"
    "             --api-key-file --parallel --queue --ctx])\n"
    "run 'llm-workbench-cli COMMAND --help' for the flags of one command\n";

}  // namespace

int main(int argc, char** argv) {
  engine::restart_with_better_blas_core(argv);  // before anything else: it may replace the process
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "generate") return wb::cli::cmd_generate(argc, argv);
    if (cmd == "tokenize") return wb::cli::cmd_tokenize(argc, argv);
    if (cmd == "tokenizer") return wb::cli::cmd_tokenizer(argc, argv);
    if (cmd == "bench") return wb::cli::cmd_bench(argc, argv);
    if (cmd == "init") return wb::cli::cmd_init(argc, argv);
    if (cmd == "convert") return wb::cli::cmd_convert(argc, argv);
    if (cmd == "quantize") return wb::cli::cmd_quantize(argc, argv);
    if (cmd == "eval") return wb::cli::cmd_eval(argc, argv);
    if (cmd == "train") return wb::cli::cmd_train(argc, argv);
    if (cmd == "data") return wb::cli::cmd_data(argc, argv);
    if (cmd == "attention") return wb::cli::cmd_attention(argc, argv);
    if (cmd == "lens") return wb::cli::cmd_lens(argc, argv);
    if (cmd == "serve") return wb::cli::cmd_serve(argc, argv);
    std::cerr << "llm-workbench-cli: unknown command '" << cmd << "' (try --help)\n";
    return 2;
  } catch (const wb::cli::HelpRequested& h) {
    std::cout << h.what();
    return 0;
  } catch (const wb::cli::UsageError& e) {
    std::cerr << "llm-workbench-cli " << cmd << ": " << e.what() << "\n";
    return 2;
  } catch (const engine::Error& e) {
    std::cerr << "llm-workbench-cli " << cmd << ": error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "llm-workbench-cli " << cmd << ": error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "llm-workbench-cli " << cmd << ": error: " << e.what() << "\n";
    return 1;
  }
}
