#!/usr/bin/env bash
# The starter recipe at toy sizes, end to end (scripts/make-starter.sh --tiny): world data, tokenizer,
# init, pretraining, SFT, evaluations. Asserts that each training stage lowers its loss, that the trained
# model answers questions about facts it was told and replies in the chat template, and reports its sums.
#   test_starter_recipe.sh SOURCE_DIR CLI WORK_DIR
set -euo pipefail
src="$1"; cli="$2"; work="$3"
bash "$src/scripts/make-starter.sh" --tiny --cli "$cli" --out "$work" --threads 1
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
doc = json.load(open(f"{work}/model/workbench.json"))
r, ev = doc["recipe"], doc["evals"]
pre, sft = r["pretraining"], r["sft"]
print(json.dumps({"pretraining": [pre["first_loss"], pre["final_loss"]], "sft": [sft["first_loss"], sft["final_loss"]],
                  "arith": ev["arith"]["accuracy"],
                  "arith_categories": ev["arith"]["categories"], "facts": ev["facts"]["accuracy"],
                  "chat": ev["chat"]["accuracy"]}, indent=1))
failures = []
if not pre["final_loss"] < 0.5 * pre["first_loss"]:
    failures.append(f"pretraining loss did not halve: {pre['first_loss']} -> {pre['final_loss']}")
if not sft["final_loss"] < 0.8 * sft["first_loss"]:
    failures.append(f"SFT loss did not fall by a fifth: {sft['first_loss']} -> {sft['final_loss']}")
# Held-out sums are reported, not asserted: at toy size whether two 96-wide blocks learn to copy a
# question's operands into the worked sum is a matter of the seed and of rounding (measured on one AMD EPYC
# Zen 3: one-digit sums 32 of 35 in one run, 0-2 of 35 in five others -- seeds 1-3, three builds -- while
# every run learned the template, and the facts in all but one seed-2 run). The full-size recipe's sums are
# measured in docs/starter-model.md. The bounds below held in every run with this test's seed (1).
seen = ev["facts"]["categories"]["seen"]
if not seen["correct"] / seen["n"] >= 0.25:
    failures.append(f"facts seen in training: {seen['correct']} of {seen['n']} right, under a quarter")
if not ev["chat"]["accuracy"] >= 0.8:
    failures.append(f"chat replies in the template and stopped: {ev['chat']['accuracy']} below 0.8")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
