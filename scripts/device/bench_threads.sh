#!/usr/bin/env bash
# Ours vs llama.cpp at 8 and 16 threads on the device host's CPU (same binaries as here).
exec > >(tee "$OUT/device_bench16.txt") 2>&1
REPO=$PWD
[ -e /work/main ] || { mkdir -p /work && ln -s "$REPO" /work/main; }
tar -C /tmp -xJf .devcarry/bundle.tar.xz
tar -C / -xJf .devcarry/lcpp.tar.xz
export LD_LIBRARY_PATH=/tmp/wb/libs:/usr/local/cuda/lib64
lscpu | grep -E "^CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket|Model name"
CLI=/work/main/build/bin/llm-workbench-cli; LB=/tmp/peers/llama.cpp/build/bin/llama-bench
tok=resources/tokenizers/gpt2; B=/tmp/bm; mkdir -p $B
$CLI init --preset gpt2-124m --out $B/gpt2-hf --tokenizer $tok >/dev/null
$CLI init --preset llama-1b --out $B/llama1b-hf --tokenizer $tok --vocab 50257 >/dev/null
for d in f32 f16 q8_0 q4_0; do $CLI convert --in $B/gpt2-hf --out $B/gpt2-$d.gguf --to gguf --dtype $d >/dev/null 2>&1; done
for d in f16 q8_0 q4_0; do $CLI convert --in $B/llama1b-hf --out $B/llama1b-$d.gguf --to gguf --dtype $d >/dev/null 2>&1; done
ls -la $B
run() { # model threads
  o=$($CLI bench --model $B/$1.gguf --threads $2 --prompt-tokens 128 --gen-tokens 64 --repetitions 3 --json 2>/dev/null)
  l=$($LB -m $B/$1.gguf -t $2 -p 128 -n 64 -r 3 -o json 2>/dev/null)
  python3 - "$1" "$2" "$o" "$l" <<'PY'
import json,sys
m,t,o,l=sys.argv[1:5]
try:
  o=json.loads(o); l=json.loads(l)
  lpp=[x['avg_ts'] for x in l if x['n_prompt']>0][0]; ltg=[x['avg_ts'] for x in l if x['n_gen']>0][0]
  print(f"{m:14s} t={t:2s} ours {o['prefill_tokens_per_s']:8.1f}/{o['decode_tokens_per_s']:6.1f}  lcpp {lpp:8.1f}/{ltg:6.1f}  ratio {o['prefill_tokens_per_s']/lpp:.2f}/{o['decode_tokens_per_s']/ltg:.2f}  [{o['backend']}]", flush=True)
except Exception as e: print(m,t,"ERR",e, str(o)[:200], str(l)[:200])
PY
}
for m in gpt2-f32 gpt2-f16 gpt2-q8_0 gpt2-q4_0; do run $m 8; run $m 16; done
for m in llama1b-q4_0 llama1b-q8_0 llama1b-f16; do run $m 16; done
echo DONE
