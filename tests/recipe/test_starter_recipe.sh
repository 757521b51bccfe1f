#!/usr/bin/env bash
# The starter recipe at toy sizes, end to end (scripts/make-starter.sh --tiny): world data, tokenizer,
# init, pretraining, SFT, evaluations. Asserts that each training stage lowers its loss and that the
# trained model answers held-out sums far better than the same model before training.
#   test_starter_recipe.sh SOURCE_DIR CLI WORK_DIR
set -euo pipefail
src="$1"; cli="$2"; work="$3"
bash "$src/scripts/make-starter.sh" --tiny --cli "$cli" --out "$work" --threads 1
# The untrained model on the same held-out sums: the chance level the trained one is compared with.
"$cli" eval --model "$work/work/init" --task arith --n 100 --seed 7 --json --threads 1 > "$work/work/eval-arith-init.json"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
doc = json.load(open(f"{work}/model/workbench.json"))
r, ev = doc["recipe"], doc["evals"]
before = json.load(open(f"{work}/work/eval-arith-init.json"))
pre, sft = r["pretraining"], r["sft"]
print(json.dumps({"pretraining": [pre["first_loss"], pre["final_loss"]], "sft": [sft["first_loss"], sft["final_loss"]],
                  "arith_before": before["accuracy"], "arith": ev["arith"]["accuracy"],
                  "arith_categories": ev["arith"]["categories"], "facts": ev["facts"]["accuracy"],
                  "chat": ev["chat"]["accuracy"]}, indent=1))
failures = []
if not pre["final_loss"] < 0.5 * pre["first_loss"]:
    failures.append(f"pretraining loss did not halve: {pre['first_loss']} -> {pre['final_loss']}")
if not sft["final_loss"] < 0.8 * sft["first_loss"]:
    failures.append(f"SFT loss did not fall by a fifth: {sft['first_loss']} -> {sft['final_loss']}")
add1 = ev["arith"]["categories"].get("add_1d", {}).get("accuracy", 0.0)
if not add1 >= ARITH_ADD1_MIN:
    failures.append(f"one-digit addition accuracy {add1} below ARITH_ADD1_MIN")
if not ev["arith"]["accuracy"] >= before["accuracy"] + ARITH_GAIN_MIN:
    failures.append(f"arithmetic accuracy {before['accuracy']} -> {ev['arith']['accuracy']}: not up by ARITH_GAIN_MIN")
if not ev["chat"]["accuracy"] >= CHAT_MIN:
    failures.append(f"chat replies in the template and stopped: {ev['chat']['accuracy']} below CHAT_MIN")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
