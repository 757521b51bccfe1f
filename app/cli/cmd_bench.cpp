// `bench`: prefill and decode speed the way llama-bench measures them (pp N: one forward over N
// prompt tokens from an empty cache; tg N: N single-token forwards), averaged over repetitions
// after one warm-up, plus peak RSS. With --parallel S the decode test advances S sequences together, one
// batched step per token (Runner::forward_batch), and reports their aggregate tokens/s.
// Decode reads every weight once per token, so its speed is also given as bytes per token and GB/s
// (decode_traffic.h); --memory-bandwidth measures this machine's read bandwidth with the same thread
// count in the same run and gives decode as a fraction of it.
#include <chrono>
#include <iostream>
#include <random>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "decode_traffic.h"
#include "engine/kv_cache.h"
#include "memory_bandwidth.h"

namespace wb::cli {

int cmd_bench(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = {
      {"model", true, false, "model directory or file"},
      {"prompt-tokens", true, false, "prompt length for the prefill test (default 128)"},
      {"gen-tokens", true, false, "tokens for the decode test (default 128)"},
      {"threads", true, false, "CPU threads (default: all cores)"},
      {"repetitions", true, false, "measured runs, after one warm-up (default 3)"},
      {"parallel", true, false, "sequences decoded together in batched steps (default 1)"},
      {"memory-bandwidth", false, false, "also measure main-memory read bandwidth (threads as --threads)"},
      {"json", false, false, "print one JSON object"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string path = a.required("model");
  const int n_prompt = static_cast<int>(a.integer("prompt-tokens", 128, 1, 1 << 20));
  const int n_gen = static_cast<int>(a.integer("gen-tokens", 128, 1, 1 << 20));
  const int threads = static_cast<int>(a.integer("threads", 0, 0, 1024));
  const int reps = static_cast<int>(a.integer("repetitions", 3, 1, 100));
  const int parallel = static_cast<int>(a.integer("parallel", 1, 1, 256));

  OpenedModel om = open_model(path, threads);
  const engine::ModelConfig& cfg = om.model->config();
  if (n_prompt > cfg.max_seq_len || n_gen > cfg.max_seq_len)
    throw UsageError("--prompt-tokens and --gen-tokens must fit the context length " + std::to_string(cfg.max_seq_len));
  engine::Runner runner(*om.model, *om.backend.backend);
  engine::KVCache cache(cfg, std::max(n_prompt, n_gen));
  std::vector<engine::KVCache> caches;  // --parallel: one per sequence
  if (parallel > 1)
    for (int i = 0; i < parallel; ++i) caches.emplace_back(cfg, n_gen);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> dist(0, cfg.vocab_size - 1);
  std::vector<int32_t> prompt(n_prompt);
  for (auto& t : prompt) t = dist(rng);

  using Clock = std::chrono::steady_clock;
  auto run_prefill = [&] {
    cache.clear();
    const auto t0 = Clock::now();
    runner.forward(prompt, cache);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto run_batched_decode = [&] {
    std::vector<int32_t> toks(static_cast<size_t>(parallel));
    std::vector<engine::SequenceStep> steps(static_cast<size_t>(parallel));
    for (int i = 0; i < parallel; ++i) {
      caches[static_cast<size_t>(i)].clear();
      toks[static_cast<size_t>(i)] = dist(rng);
    }
    const auto t0 = Clock::now();
    for (int t = 0; t < n_gen; ++t) {
      for (int i = 0; i < parallel; ++i)
        steps[static_cast<size_t>(i)] = {{&toks[static_cast<size_t>(i)], 1}, &caches[static_cast<size_t>(i)]};
      runner.forward_batch(steps);
      for (int32_t& x : toks) x = dist(rng);
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto run_decode = [&] {
    if (parallel > 1) return run_batched_decode();
    cache.clear();
    int32_t tok[1] = {prompt[0]};
    const auto t0 = Clock::now();
    for (int i = 0; i < n_gen; ++i) {
      runner.forward(tok, cache);
      tok[0] = dist(rng);
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  run_prefill();  // warm-up: page in the weights, size the scratch buffers
  run_decode();
  double pp = 0, tg = 0;
  for (int r = 0; r < reps; ++r) {
    pp += n_prompt / run_prefill();
    tg += static_cast<double>(n_gen) * parallel / run_decode();
  }
  pp /= reps;
  tg /= reps;
  const DecodeTraffic traffic = decode_traffic(*om.model, n_gen, parallel);
  const double decode_gb_per_s = traffic.total() * tg / 1e9;
  const double rss_mb = peak_rss_mb();  // before --memory-bandwidth's buffer, which is not the model's
  nlohmann::json out = {{"prefill_tokens_per_s", pp},
                        {"decode_tokens_per_s", tg},
                        {"peak_rss_mb", rss_mb},
                        {"backend", om.backend.backend->description()},
                        {"backend_reason", om.backend.reason},
                        {"threads", om.backend.backend->threads()},
                        {"prompt_tokens", n_prompt},
                        {"gen_tokens", n_gen},
                        {"parallel", parallel},
                        {"repetitions", reps},
                        {"parameters", cfg.parameter_count()},
                        {"weights", om.model->weight_summary()},
                        {"decode_bytes_per_token", traffic.total()},
                        {"decode_weight_bytes_per_token", traffic.weight_bytes},
                        {"decode_kv_bytes_per_token", traffic.kv_bytes},
                        {"decode_gb_per_s", decode_gb_per_s}};
  MemoryBandwidth bw;
  if (a.has("memory-bandwidth")) {
    bw = measure_read_bandwidth(om.backend.backend->threads());
    out["memory_read_gb_per_s"] = bw.read_gb_per_s;
    out["memory_read_buffer_bytes"] = bw.buffer_bytes;
    out["decode_bandwidth_fraction"] = decode_gb_per_s / bw.read_gb_per_s;
  }
  if (a.has("json")) {
    print_json(out);
  } else {
    std::printf("model       %s (%.1fM parameters)\n", path.c_str(), cfg.parameter_count() / 1e6);
    std::printf("weights     %s\n", om.model->weight_summary().c_str());
    std::printf("backend     %s — %s\n", om.backend.backend->description().c_str(), om.backend.reason.c_str());
    std::printf("prefill     %.1f tokens/s (pp%d)\n", pp, n_prompt);
    if (parallel > 1) std::printf("decode      %.1f tokens/s in all, %d sequences (tg%d each)\n", tg, parallel, n_gen);
    else std::printf("decode      %.1f tokens/s (tg%d)\n", tg, n_gen);
    std::printf("decode read %.1f MB/token (weights %.1f, KV cache %.1f), %.1f GB/s\n", traffic.total() / 1e6,
                traffic.weight_bytes / 1e6, traffic.kv_bytes / 1e6, decode_gb_per_s);
    if (a.has("memory-bandwidth"))
      std::printf("memory read %.1f GB/s (%d threads, %.0f MiB buffer): decode at %.2f of it\n", bw.read_gb_per_s,
                  bw.threads, bw.buffer_bytes / 1048576.0, decode_gb_per_s / bw.read_gb_per_s);
    std::printf("peak RSS    %.0f MiB\n", rss_mb);
  }
  return 0;
}

}  // namespace wb::cli
