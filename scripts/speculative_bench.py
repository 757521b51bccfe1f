#!/usr/bin/env python3
"""Speculative decoding on the starter model: trains a small draft with the starter's own tokenizer, then
times greedy chat replies with and without it (and with prompt lookup).

    scripts/speculative_bench.py [--cli build/bin/llm-workbench-cli] [--work /tmp/spec-draft] [--threads 1]
                                 [--rounds 2]

The draft is the starter recipe's shape at toy size (2 blocks x 128, 471 K parameters against the starter's
4.6 M): world corpus and chat data from `data synth`, `init` on resources/models/starter's tokenizer (a draft
must share the target's vocabulary), 2500 pretraining and 400 SFT steps -- a few minutes on 2 cores; kept in
--work and reused. Each configuration answers the same chat questions greedily; the script prints decode
tokens/s per round, the speed-up over plain decoding, the draft's acceptance, and checks that every
configuration produced the same text (greedy speculative decoding must not change a token).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STARTER = os.path.join(HERE, "..", "resources", "models", "starter")
QUESTIONS = ["Where does Mira live?", "What colour is the kite of Tom?", "Tell me a story about the tall tower.",
             "Who is the friend of Ana?", "What is 12 + 7?", "Tell me about the little world."]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def make_draft(cli, work, threads):
    draft = os.path.join(work, "sft")
    if os.path.exists(os.path.join(draft, "config.json")):
        return draft
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)  # noqa: E731
    run([cli, "data", "synth", "--kind", "corpus", "--n", "10000", "--seed", "1", "--out", p("corpus.txt")])
    run([cli, "data", "synth", "--kind", "chat", "--n", "8000", "--seed", "2", "--out", p("chat.jsonl")])
    run([cli, "init", "--preset", "starter", "--arch", "llama", "--layers", "2", "--width", "128", "--heads", "4",
         "--kv-heads", "2", "--context", "256", "--vocab", "tokenizer", "--tokenizer", STARTER, "--seed", "1",
         "--out", p("init")])
    common = ["--batch", "8", "--seq", "128", "--val-fraction", "0.01", "--seed", "1", "--threads", str(threads)]
    run([cli, "train", "--recipe", "pretrain", "--model", p("init"), "--data", p("corpus.txt"), "--out",
         p("pretrained"), "--steps", "2500", "--lr", "3e-3", "--warmup", "125", "--val-every", "625"] + common,
        stdout=subprocess.DEVNULL)
    run([cli, "train", "--recipe", "sft", "--model", p("pretrained"), "--data", p("chat.jsonl"), "--out", draft,
         "--steps", "400", "--lr", "1e-3", "--warmup", "20", "--val-every", "100"] + common, stdout=subprocess.DEVNULL)
    return draft


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin", "llm-workbench-cli"))
    ap.add_argument("--work", default="/tmp/spec-draft")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    draft = make_draft(a.cli, a.work, a.threads)
    configs = {"plain": [], "lookup 2, k=4": ["--lookup", "2", "--draft-tokens", "4"]}
    for k in (2, 4, 6, 8):
        configs[f"draft k={k}"] = ["--draft", draft, "--draft-tokens", str(k)]
    rates = {name: [] for name in configs}
    texts = {}
    for r in range(a.rounds):
        for name, extra in configs.items():
            tokens, seconds, accepted, drafted = 0, 0.0, 0, 0
            for q in QUESTIONS:
                out = run([a.cli, "generate", "--model", STARTER, "--chat", "--prompt", q, "--max-tokens", "128",
                           "--temperature", "0", "--threads", str(a.threads), "--json"] + extra,
                          capture_output=True, text=True)
                d = json.loads(out.stdout)
                n = d["stats"]["generated_tokens"]
                tokens += n
                seconds += n / d["stats"]["decode_tokens_per_s"]
                accepted += d.get("speculative", {}).get("accepted", 0)
                drafted += d.get("speculative", {}).get("drafted", 0)
                texts.setdefault(q, set()).add(d["text"])
            rates[name].append(tokens / seconds)
            if r == 0 and drafted:
                print(f"{name}: {accepted} of {drafted} drafted tokens accepted ({tokens} generated)")
    for name, rs in rates.items():
        print(f"{name:14s} decode tok/s: {' '.join(f'{x:.0f}' for x in rs)}   "
              f"{sum(rs) / sum(rates['plain']):.2f}x plain")
    same = all(len(v) == 1 for v in texts.values())
    print("every configuration wrote the same greedy text:", same)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
