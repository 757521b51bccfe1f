#!/usr/bin/env python3
"""Writes tests/data/tokenizer/starcoder_splits.json, the reference that tests/engine/test_tokenizer_llama.cpp
(starcoder_split_matches_hf) compares our "starcoder" pre-tokenizer with.

Reference: Hugging Face `tokenizers`, with the pre-tokenizer of bigcode/starcoder's tokenizer.json,
Sequence[Digits(individual_digits=true), ByteLevel(add_prefix_space=false, trim_offsets=true,
use_regex=true)] (what llama.cpp's tokenizer.ggml.pre = "starcoder" stands for). pre_tokenize_str gives
the pieces in ByteLevel's printable alphabet; they are mapped back to the text's own bytes here, so the
fixture holds plain UTF-8 pieces. The C++ test needs no Python; rerun only to change the texts:

    python3 -m venv /tmp/venv-tok && /tmp/venv-tok/bin/pip install tokenizers
    /tmp/venv-tok/bin/python tests/tools/make_starcoder_pretok_fixture.py
"""
import json
import os
import random

import tokenizers
from tokenizers import pre_tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "data", "tokenizer", "starcoder_splits.json"))

TEXTS = [
    "",
    "Hello world",
    "def add(a, b):\n    return a + b\n",
    "for i in range(10):\n\tprint(i ** 2)",
    "x = 1234567 + 0x1F - 3.14159e-10",
    "a1b22c333d4444 e 55555",
    "version 2024-01-01 build #42",
    "   leading spaces and trailing   ",
    "space before digit 7 and 77 and  777",
    "I'm don't we'll they've she'd it's you're",
    "Numbers: ½ ² ³ ⅓ Ⅻ ٣٤٥ ४२ 五 ①",
    "line one\nline two\r\n\r\nend\n\n",
    "mixed \t\n whitespace \n\t end",
    "café 中文 😀👍🏽 naïve",
    "int main() { return 0; }  // 0 errors",
    "\u00a0nbsp\u2000en\u3000ideographic 1\u00a02",
]


def random_texts(seed, count):
    """Random strings over the character classes the two stages distinguish (digits above all)."""
    rng = random.Random(seed)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789" * 3,
        " " * 8 + "\t\n\r\x0b\x0c",
        "\u00a0\u2000\u2028\u3000\u0085",
        "'''sStTmMdDrReEvVlL",
        "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~",
        "éüñçøåßÆŒ中文字한국어",
        "٠١٢٣४५६²³¹¼½Ⅻ①",
        "\u0301\u0308😀👍🏽\u200d",
    ]
    return ["".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 32))) for _ in range(count)]


def byte_decoder():
    """ByteLevel's printable alphabet back to bytes: the printable Latin-1 bytes stand for themselves,
    the other 68 bytes, in order, for U+0100 onwards."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[chr(b)] = b
        else:
            table[chr(256 + extra)] = b
            extra += 1
    return table


def main():
    pre = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    dec = byte_decoder()
    rows = []
    for text in TEXTS + random_texts(5, 300):
        pieces = [bytes(dec[c] for c in p).decode("utf-8") for p, _ in pre.pre_tokenize_str(text)]
        assert "".join(pieces) == text, text
        rows.append({"text": text, "pieces": pieces})
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        json.dump({"about": "tests/tools/make_starcoder_pretok_fixture.py", "tokenizers_version": tokenizers.__version__,
                   "splits": rows}, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"{OUT}: {len(rows)} texts")


if __name__ == "__main__":
    main()
