#!/usr/bin/env bash
# Makes the starter model from nothing with our own CLI: a generated world -> a BPE tokenizer learned
# from it -> a small Llama-shaped model -> pretraining on the world's text -> SFT on chat dialogues in
# the ChatML template -> evaluations on held-out questions. Everything is deterministic by --seed.
#
#   scripts/make-starter.sh [--out DIR] [--cli PATH] [--tiny] [--threads N] [--seed S] [--resume]
#
# The full recipe is what resources/models/starter holds (about an hour on 2 cores); --tiny is the same
# pipeline at toy sizes (a few minutes), which the tests run. The model directory gets a workbench.json
# with the recipe (seed, sizes, data counts, steps, final losses, times), the evaluation results and
# the card the Models page shows. Work files (data, checkpoints, logs) stay in DIR/work; --resume keeps
# them and skips every stage whose output is already there (to redo SFT after changing it, say).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$here/build/starter-recipe"
cli=""
tiny=0
threads=""
seed=1
resume=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --cli) cli="$2"; shift 2 ;;
    --tiny) tiny=1; shift ;;
    --threads) threads="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --resume) resume=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "make-starter.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$cli" ]]; then
  cli="$here/build/bin/llm-workbench-cli"
fi
if [[ ! -x "$cli" ]]; then
  echo "make-starter.sh: no CLI at $cli (build first, or pass --cli PATH)" >&2
  exit 1
fi
command -v python3 > /dev/null || { echo "make-starter.sh: python3 is needed to write workbench.json" >&2; exit 1; }

# Sizes. Full: 6 blocks x 256 wide (4.6 M parameters, most of them in the blocks: the world's
# vocabulary is under 800 tokens). Tiny: the same shape family at a size that trains in minutes.
if [[ $tiny == 1 ]]; then
  layers=2; width=96; heads=4; kv_heads=2; context=128
  n_corpus=3000; n_chat=3000; n_eval=100
  pre_steps=2500; pre_batch=8; pre_seq=128; pre_lr=3e-3
  sft_steps=300; sft_batch=8; sft_seq=128; sft_lr=1e-3
else
  layers=6; width=256; heads=8; kv_heads=4; context=256
  n_corpus=${WB_STARTER_CORPUS:-40000}; n_chat=${WB_STARTER_CHAT:-30000}; n_eval=200
  pre_steps=${WB_STARTER_PRE_STEPS:-1500}; pre_batch=16; pre_seq=128; pre_lr=2e-3
  sft_steps=${WB_STARTER_SFT_STEPS:-250}; sft_batch=32; sft_seq=128; sft_lr=5e-4
fi
vocab=1024

work="$out/work"
model="$out/model"
[[ $resume == 1 ]] || rm -rf "$work"
rm -rf "$model"
mkdir -p "$work"
thread_flag=()
[[ -n "$threads" ]] && thread_flag=(--threads "$threads")
t_start=$(date +%s)
stage() { echo "== $(date -u +%H:%M:%S) $*" >&2; }
# done_already OUTPUT [MARKER]: with --resume, true when a stage finished earlier (MARKER, by default
# OUTPUT itself, exists) and the stage is skipped; otherwise OUTPUT is cleared for the stage to write.
done_already() {
  if [[ $resume == 1 && -e "${2:-$1}" ]]; then echo "   (kept from an earlier run: $1)" >&2; return 0; fi
  rm -rf "$1"
  return 1
}
# timed NAME COMMAND...: runs a stage and keeps its seconds in work/NAME.seconds for workbench.json.
timed() {
  local name="$1" t0
  shift
  t0=$(date +%s)
  "$@"
  echo $(( $(date +%s) - t0 )) > "$work/$name.seconds"
}

stage "world data (seed $seed)"
done_already "$work/corpus.txt" ||
  "$cli" data synth --kind corpus --n "$n_corpus" --seed "$seed" --out "$work/corpus.txt"
done_already "$work/chat.jsonl" ||
  "$cli" data synth --kind chat --n "$n_chat" --seed "$((seed + 1))" --out "$work/chat.jsonl"

stage "tokenizer (at most $vocab tokens, ChatML special tokens)"
done_already "$work/tokenizer" "$work/tokenizer/tokenizer_config.json" || "$cli" tokenizer train --data "$work/corpus.txt" --data "$work/chat.jsonl" --vocab-size "$vocab" \
  --out "$work/tokenizer" --json > "$work/tokenizer.json"

stage "init ($layers x $width, llama shape)"
done_already "$work/init" "$work/init/model.safetensors" || "$cli" init --preset starter --arch llama --layers "$layers" --width "$width" --heads "$heads" \
  --kv-heads "$kv_heads" --context "$context" --vocab tokenizer --tokenizer "$work/tokenizer" \
  --seed "$seed" --out "$work/init" 2> "$work/init.log"

stage "pretraining ($pre_steps steps of $pre_batch x $pre_seq tokens)"
done_already "$work/pretrained" "$work/pretrain.seconds" || timed pretrain "$cli" train --recipe pretrain --model "$work/init" --data "$work/corpus.txt" --out "$work/pretrained" \
  --steps "$pre_steps" --batch "$pre_batch" --seq "$pre_seq" --lr "$pre_lr" --warmup $((pre_steps / 20)) \
  --val-fraction 0.01 --val-every $((pre_steps / 4)) --seed "$seed" "${thread_flag[@]}" \
  --metrics "$work/pretrain.jsonl" > "$work/pretrain.log"

stage "SFT ($sft_steps steps of $sft_batch conversations x $sft_seq tokens, ChatML)"
done_already "$work/sft" "$work/sft.seconds" || timed sft "$cli" train --recipe sft --model "$work/pretrained" --data "$work/chat.jsonl" --out "$work/sft" \
  --steps "$sft_steps" --batch "$sft_batch" --seq "$sft_seq" --lr "$sft_lr" --warmup $((sft_steps / 20)) \
  --val-fraction 0.01 --val-every $((sft_steps / 4)) --seed "$seed" "${thread_flag[@]}" \
  --metrics "$work/sft.jsonl" > "$work/sft.log"

# The shipped weights are f16 (half the size; the evaluations below measure exactly these).
rm -rf "$model.part"
"$cli" convert --in "$work/sft" --out "$model.part" --to hf --dtype f16 2> "$work/convert.log"
rm -rf "$model" && mv "$model.part" "$model"

stage "evaluation on held-out questions ($n_eval each)"
for task in arith facts chat; do
  # Written beside, then renamed: a failed evaluation leaves no result for --resume to keep.
  done_already "$work/eval-$task.json" ||
    { "$cli" eval --model "$model" --task "$task" --n "$n_eval" --seed 7 --json "${thread_flag[@]}" \
        > "$work/eval-$task.json.part" && mv "$work/eval-$task.json.part" "$work/eval-$task.json"; }
done
t_total=$(( $(date +%s) - t_start ))

stage "workbench.json"
python3 - "$work" "$model" <<EOF
import json, sys
work, model = sys.argv[1], sys.argv[2]

def last_metric(path, key):
    value = None
    for line in open(path):
        row = json.loads(line)
        if key in row:
            value = row[key]
    return value

def first_metric(path, key):
    for line in open(path):
        row = json.loads(line)
        if key in row:
            return row[key]
    return None

config = json.load(open(f"{model}/config.json"))
import re
params = int(re.search(r"([0-9]+) parameters", open(f"{work}/init.log").read()).group(1))
tok = json.load(open(f"{work}/tokenizer.json"))
evals = {t: json.load(open(f"{work}/eval-{t}.json")) for t in ("arith", "facts", "chat")}
for e in evals.values():
    e.pop("examples", None)
    e.pop("model", None)
recipe = {
    "command": "scripts/make-starter.sh" + (" --tiny" if $tiny else ""),
    "seed": $seed,
    "world_seed": 1,
    "data": {"corpus_documents": $n_corpus, "chat_dialogues": $n_chat},
    "tokenizer": {"vocab_size": tok["vocab_size"], "pre_tokenizer": tok["pre_tokenizer"],
                  "chat_template": tok["chat_template"]},
    "model": {"arch": "llama", "parameters": params, "layers": $layers, "width": $width, "heads": $heads, "kv_heads": $kv_heads,
              "ffn": config["intermediate_size"], "context": $context, "tied_embeddings": True},
    "pretraining": {"steps": $pre_steps, "batch": $pre_batch, "seq": $pre_seq, "lr": $pre_lr,
                    "first_loss": first_metric(f"{work}/pretrain.jsonl", "loss"),
                    "final_loss": last_metric(f"{work}/pretrain.jsonl", "loss"),
                    "final_val_loss": last_metric(f"{work}/pretrain.jsonl", "val_loss"),
                    "seconds": int(open(f"{work}/pretrain.seconds").read())},
    "sft": {"steps": $sft_steps, "batch": $sft_batch, "seq": $sft_seq, "lr": $sft_lr, "template": "chatml",
            "first_loss": first_metric(f"{work}/sft.jsonl", "loss"),
            "final_loss": last_metric(f"{work}/sft.jsonl", "loss"),
            "final_val_loss": last_metric(f"{work}/sft.jsonl", "val_loss"),
            "seconds": int(open(f"{work}/sft.seconds").read())},
    "training_seconds": int(open(f"{work}/pretrain.seconds").read()) + int(open(f"{work}/sft.seconds").read()),
}
acc = {t: e.get("accuracy") for t, e in evals.items()}
add_2d = evals["arith"].get("categories", {}).get("add_2d")
arith_share = f"{round(100 * acc['arith'])} % right" + (
    f" ({round(100 * add_2d['accuracy'])} % of two-digit additions)" if add_2d else "")
card = {
    "title": "Starter model (a toy)",
    "summary": (f"A {params / 1e6:.1f} M-parameter Llama-shaped model trained on 2 CPU cores by scripts/make-starter.sh: "
                "pretraining on the stories, facts and sums of a small generated world, then SFT on chat "
                "dialogues in the ChatML template."),
    "trained_on": [
        f"{$n_corpus} documents of world stories, fact questions and sums (pretraining)",
        f"{$n_chat} chat dialogues: facts, sums, greetings, polite refusals (SFT)",
        f"its own {tok['vocab_size']}-token BPE tokenizer",
    ],
    "limitations": ("A toy that knows only its own small world: 24 people and animals, 10 places, their "
                    "things and friends; anything outside it gets a refusal. It works sums out place by place "
                    f"(up to three digits, small products); of sums it never saw it gets {arith_share}, so "
                    "check its arithmetic."),
}
if $tiny:
    card["title"] = "Starter recipe, tiny run"
    card["summary"] = "The starter recipe at toy sizes (scripts/make-starter.sh --tiny)."
doc = {"created_by": "scripts/make-starter.sh", "card": card, "recipe": recipe, "evals": evals}
with open(f"{model}/workbench.json", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print(json.dumps({"model": model, "accuracy": acc, "pretrain_loss": [recipe["pretraining"]["first_loss"],
      recipe["pretraining"]["final_loss"]], "sft_loss": [recipe["sft"]["first_loss"], recipe["sft"]["final_loss"]],
      "seconds": $t_total}))
EOF
stage "done: $model ($t_total s)"
