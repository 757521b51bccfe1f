#!/usr/bin/env python3
"""Writes tests/data/tokenizer/trained/: a tokenizer trained by our CLI on a small corpus, and the ids
Hugging Face `tokenizers` gives for a set of texts when it loads that tokenizer.json.

test_bpe_trainer checks (1) that training again on corpus.txt with the same settings gives exactly the
committed vocabulary and merges (the trainer is deterministic), and (2) that our tokenizer encodes the
texts to the ids HF computed here (the files we write mean to HF what they mean to us).

Usage (from the repository root, with a build and a virtualenv holding `tokenizers`):
  python3 -m venv /tmp/venv-ref && /tmp/venv-ref/bin/pip install tokenizers
  /tmp/venv-ref/bin/python tests/tools/make_bpe_trainer_fixture.py build/bin/llm-workbench-cli
"""
import json
import os
import subprocess
import sys

from tokenizers import Tokenizer

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "tokenizer", "trained")
VOCAB_SIZE = 600

TEXTS = [
    "Once upon a time, a little fox lived in a big green forest.",
    "The cat sat on the mat. The dog sat on the log!",
    "What is 123 + 456? It is 579. And 7 * 8 = 56.",
    "  two spaces, a tab\there, and a new line\nat the end\n",
    "Unicode: café, naïve, Straße, 日本語, emoji 🦊.",
    "<|im_start|>user\nWho lives in the red house?<|im_end|>\n<|im_start|>assistant\nMia lives there.<|im_end|>",
    "don't, won't, it's, we're, they've, I'm, you'll, he'd",
    "",
]


def main():
    cli = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    corpus = os.path.join(OUT, "corpus.txt")
    subprocess.run([cli, "data", "synth", "--kind", "stories", "--n", "120", "--seed", "7", "--out", corpus],
                   check=True)
    subprocess.run([cli, "tokenizer", "train", "--data", corpus, "--vocab-size", str(VOCAB_SIZE), "--out", OUT],
                   check=True)
    tok = Tokenizer.from_file(os.path.join(OUT, "tokenizer.json"))
    cases = [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids} for t in TEXTS]
    with open(os.path.join(OUT, "hf_encodings.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab_size": VOCAB_SIZE, "pre_tokenizer": "qwen2", "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
