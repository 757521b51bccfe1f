#!/usr/bin/env python3
"""Checks engine/src/tokenizer/unicode_tables.cpp against the reference pre-tokenizer.

For every code point (surrogates excepted) it asks Hugging Face `tokenizers`' ByteLevel pre-tokenizer
(the GPT-2 split pattern on Oniguruma) which class the character falls in, and compares with the
generated table. Run after regenerating the table or when moving to a newer reference:

    /tmp/venv-tok/bin/pip install tokenizers
    /tmp/venv-tok/bin/python tests/tools/check_unicode_tables.py

How a class is observed: "a"+c stays one piece only if c is a letter, "1"+c only if c is a number,
"!"+c only if c is neither letter, number nor space; what is left is space.
"""
import os
import re
import sys

from tokenizers import pre_tokenizers

here = os.path.dirname(os.path.abspath(__file__))
table = os.path.join(here, "..", "..", "engine", "src", "tokenizer", "unicode_tables.cpp")
ours = {}
with open(table, encoding="utf-8") as f:
    for m in re.finditer(r"\{0x([0-9A-F]+), 0x([0-9A-F]+), CharClass::(\w+)\}", f.read()):
        for cp in range(int(m.group(1), 16), int(m.group(2), 16) + 1):
            ours[cp] = m.group(3)

split = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str


def reference_class(c):
    if len(split("a" + c)) == 1:
        return "letter"
    if len(split("1" + c)) == 1:
        return "number"
    if len(split("!" + c)) == 1:
        return "other"
    return "space"


bad = 0
for cp in range(0x110000):
    if 0xD800 <= cp <= 0xDFFF:
        continue
    want = reference_class(chr(cp))
    got = ours.get(cp, "other")
    if want != got:
        bad += 1
        if bad <= 20:
            print(f"U+{cp:04X}: reference {want}, table {got}")
print(f"{bad} mismatches")
sys.exit(1 if bad else 0)
