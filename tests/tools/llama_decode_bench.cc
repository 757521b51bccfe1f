// Hand-run peer benchmark (not built by CMake, not a test): pp N / tg N over llama.cpp's own library
// the way llama-bench measures them (random tokens, one warm-up, the mean of the repetitions), for
// when only libllama of a llama.cpp build is ready; also quantizes through llama_model_quantize.
//   L=/path/to/llama.cpp; g++ -O2 -std=c++17 -I$L/include -I$L/ggml/include tests/tools/llama_decode_bench.cc \
//       -L$L/build/bin -lllama -lggml -lggml-base -Wl,-rpath,$L/build/bin -o /tmp/llama_decode_bench
//   /tmp/llama_decode_bench MODEL.gguf THREADS PP TG REPS          -> {"pp":tok/s,"tg":tok/s}
//   /tmp/llama_decode_bench quantize IN.gguf OUT.gguf Q4_K_M|Q4_0
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "llama.h"
static void quiet(ggml_log_level, const char*, void*) {}
int main(int argc, char** argv) {
  llama_log_set(quiet, nullptr);
  llama_backend_init();
  if (argc >= 4 && std::string(argv[1]) == "quantize") {
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    qp.ftype = std::string(argv[4]) == "Q4_K_M" ? LLAMA_FTYPE_MOSTLY_Q4_K_M : LLAMA_FTYPE_MOSTLY_Q4_0;
    qp.nthread = 2;
    return (int)llama_model_quantize(argv[2], argv[3], &qp);
  }
  const char* path = argv[1];
  const int threads = atoi(argv[2]), n_prompt = atoi(argv[3]), n_gen = atoi(argv[4]), reps = atoi(argv[5]);
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(path, mp);
  if (!model) { fprintf(stderr, "load failed\n"); return 1; }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = n_prompt + n_gen; cp.n_batch = 2048; cp.n_ubatch = 512; cp.n_threads = threads; cp.n_threads_batch = threads;
  cp.no_perf = true;
  llama_context* ctx = llama_init_from_model(model, cp);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  auto clear = [&] { llama_memory_clear(llama_get_memory(ctx), true); };
  auto pp = [&](int n) {
    std::vector<llama_token> t(n);
    for (auto& v : t) v = std::rand() % n_vocab;
    llama_batch b = llama_batch_get_one(t.data(), n);
    if (llama_decode(ctx, b)) { fprintf(stderr, "decode failed\n"); exit(1); }
    llama_synchronize(ctx);
  };
  auto tg = [&](int n) {
    llama_token tok = std::rand() % n_vocab;
    for (int i = 0; i < n; ++i) {
      llama_batch b = llama_batch_get_one(&tok, 1);
      if (llama_decode(ctx, b)) { fprintf(stderr, "decode failed\n"); exit(1); }
      llama_synchronize(ctx);
      tok = std::rand() % n_vocab;
    }
  };
  using C = std::chrono::steady_clock;
  double pps = 0, tgs = 0;
  clear(); pp(n_prompt);  // warm-up as llama-bench's
  for (int r = 0; r < reps; ++r) { clear(); auto t0 = C::now(); pp(n_prompt); pps += n_prompt / std::chrono::duration<double>(C::now() - t0).count(); }
  clear(); tg(1);
  for (int r = 0; r < reps; ++r) { clear(); auto t0 = C::now(); tg(n_gen); tgs += n_gen / std::chrono::duration<double>(C::now() - t0).count(); }
  printf("{\"pp\":%.3f,\"tg\":%.3f}\n", pps / reps, tgs / reps);
}
