#!/usr/bin/env python3
"""Inputs for timing llm.c's CPU trainer (train_gpt2.c) against `llm-workbench-cli train`.

Writes, into --out (an llm.c checkout, built outside this repository):
  gpt2_124M.bin                                       GPT-2 124M checkpoint, llm.c format v3 (fp32),
                                                      random N(0, 0.02) weights, norm gains 1, biases 0
  dev/data/tinyshakespeare/tiny_shakespeare_{train,val}.bin
                                                      llm.c token files (header magic 20240520,
                                                      version 1) of random GPT-2 token ids
and --text, a plain-text file of about the same number of tokens for our `train --recipe pretrain`.

Only the speed of a training step is compared, which does not depend on the weights' values or the
text, so neither needs to match the other. Pure Python (no numpy): the weights tile a pool of one
million normal samples.

Usage: make_llmc_bench_inputs.py --out /tmp/peers/llmc --text /tmp/peers/bench_text.txt
"""
import argparse
import array
import os
import random
import struct

# GPT-2 124M, as llm.c's header describes it.
MAX_T, V, L, NH, C = 1024, 50257, 12, 12, 768
VP = 50304  # vocabulary padded to a multiple of 128, as llm.c stores it


def write_checkpoint(path: str, rng: random.Random) -> None:
    header = [0] * 256
    header[0:8] = [20240326, 3, MAX_T, V, L, NH, C, VP]
    pool = array.array("f", (rng.gauss(0.0, 0.02) for _ in range(1 << 20))).tobytes()

    def normal(count: int) -> bytes:
        reps, rest = divmod(count * 4, len(pool))
        return pool * reps + pool[:rest]

    def const(count: int, value: float) -> bytes:
        return struct.pack("<f", value) * count

    # llm.c's parameter order (train_gpt2.c fill_in_parameter_sizes).
    tensors = [
        normal(VP * C), normal(MAX_T * C),                      # wte, wpe
        const(L * C, 1.0), const(L * C, 0.0),                   # ln1 w, b
        normal(L * 3 * C * C), const(L * 3 * C, 0.0),           # qkv w, b
        normal(L * C * C), const(L * C, 0.0),                   # attn proj w, b
        const(L * C, 1.0), const(L * C, 0.0),                   # ln2 w, b
        normal(L * 4 * C * C), const(L * 4 * C, 0.0),           # fc w, b
        normal(L * C * 4 * C), const(L * C, 0.0),               # fc proj w, b
        const(C, 1.0), const(C, 0.0),                           # ln_f w, b
    ]
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        for t in tensors:
            f.write(t)


def write_tokens(path: str, count: int, rng: random.Random) -> None:
    header = [0] * 256
    header[0:3] = [20240520, 1, count]
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(array.array("H", (rng.randrange(V) for _ in range(count))).tobytes())


def write_text(path: str, words: int, rng: random.Random) -> None:
    vocab = "the a little cat dog sun ran saw big happy tree under over and then home red blue".split()
    with open(path, "w", encoding="utf-8") as f:
        for i in range(words):
            f.write(rng.choice(vocab))
            f.write(".\n" if i % 12 == 11 else " ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="llm.c checkout to write the checkpoint and token files into")
    ap.add_argument("--text", required=True, help="plain-text training file for llm-workbench-cli train")
    ap.add_argument("--tokens", type=int, default=200_000)
    args = ap.parse_args()
    rng = random.Random(1337)
    write_checkpoint(os.path.join(args.out, "gpt2_124M.bin"), rng)
    data = os.path.join(args.out, "dev", "data", "tinyshakespeare")
    os.makedirs(data, exist_ok=True)
    write_tokens(os.path.join(data, "tiny_shakespeare_train.bin"), args.tokens, rng)
    write_tokens(os.path.join(data, "tiny_shakespeare_val.bin"), args.tokens // 10, rng)
    write_text(args.text, args.tokens, rng)


if __name__ == "__main__":
    main()
