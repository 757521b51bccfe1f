#!/usr/bin/env python3
"""Writes the reference encodings that tests/engine/test_tokenizer.cpp compares against.

Reference: Hugging Face `tokenizers` (the Rust implementation behind transformers' fast GPT-2
tokenizer), built from the GPT-2 release files in resources/tokenizers/gpt2/. The C++ test needs no
Python; rerun this only to change the texts or move to a newer reference:

    python3 -m venv /tmp/venv-tok && /tmp/venv-tok/bin/pip install tokenizers
    /tmp/venv-tok/bin/python tests/tools/make_tokenizer_fixture.py

Outputs (both small, deterministic for a given tokenizers version):
  tests/data/tokenizer/gpt2_encodings.json   texts and GPT-2 ids, with allow_special off and on
  tests/data/tokenizer/tiny_bytelevel.json   a small BPE tokenizer.json trained here (real HF layout:
                                             Sequence[ByteLevel] pre-tokenizer with add_prefix_space,
                                             pair-style merges, special and non-special added tokens)
  plus its encodings inside gpt2_encodings.json under "tiny".
"""
import json
import os
import random

import tokenizers
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "data"))
VOCAB = os.path.join(DATA, "..", "..", "resources", "tokenizers", "gpt2", "vocab.json")
MERGES = os.path.join(DATA, "..", "..", "resources", "tokenizers", "gpt2", "merges.txt")
OUT_DIR = os.path.join(DATA, "tokenizer")

TEXTS = [
    "",
    "Hello world",
    "Hello, world! How are you today?",
    "The quick brown fox jumps over the lazy dog.",
    "I'm don't we'll they've she'd it's you're",
    "I'M DON'T WE'LL THEY'VE",  # contractions are case-sensitive in GPT-2
    "'s 't 're 've 'm 'll 'd ''s '''",
    "rock 'n' roll, 'quoted', l'homme",
    " leading space",
    "  two leading spaces",
    "trailing space ",
    "trailing spaces   ",
    "   ",
    " ",
    "a  b   c    d",
    "tab\tseparated\tvalues",
    "\t\tindented with tabs",
    "line one\nline two\n",
    "\n",
    "\n\n\n",
    "para one\n\n\npara two",
    "windows\r\nline\r\nendings\r\n",
    "mixed \t\n whitespace \n\t end",
    " \n ",
    "12345 3.14 -42 1,000,000 0x1F 2024-01-01",
    "1234567890123456789",
    "Numbers: ½ ² ³ ⅓ Ⅻ ٣٤٥ ४२ 五",
    "Punctuation!!! ??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}}",
    "email@example.com https://example.org/path?query=1&x=y#frag",
    "Emoji: 😀😃😄 👍🏽 ❤️ 🎉",
    "ZWJ: 👨‍👩‍👧‍👦 🏳️‍🌈 👩🏾‍💻",
    "Flags: 🇺🇸🇬🇧🇯🇵🇩🇪",
    "中文测试：你好，世界！",
    "日本語のテキスト、カタカナとひらがな。",
    "한국어 텍스트입니다",
    "مرحبا بالعالم، هذا اختبار.",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "Ελληνικά και Русский текст",
    "Accents: café naïve résumé Zürich São Paulo Ångström",
    "Combining: e\u0301 a\u0308 n\u0303 \u0061\u0301\u0302\u0303",
    "Mixed: English中文123русский😀عربي",
    "def foo(x):\n    return x * 2  # comment\n",
    "int main() { printf(\"%d\\n\", 42); return 0; }",
    "    indented code\n        more indented\n",
    "<|endoftext|>",
    "before<|endoftext|>after",
    "a <|endoftext|> b<|endoftext|><|endoftext|>c",
    "<|endoftext|",
    "<|endoftext|>\n<|endoftext|> ",
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "x" * 2000,
    "ab" * 700,
    " " * 300,
    "\n" * 100,
    "!" * 500,
    "9" * 400,
    "Non-breaking\u00a0space and\u3000ideographic space and\u2028line sep\u0085nel",
    "Zero\u200bwidth\u200cjoiners\u200d and BOM\ufeffinside",
    "Control chars \x00\x01\x1f\x7f end",
    "Private use \ue000\uf8ff and high \U0010fffd",
    "Math: ∑∫√∞ ≤≥≠ α+β=γ",
    "Currency: $100 €50 £30 ¥1000 ₹500",
]

SPECIAL_TEXTS = [t for t in TEXTS if "<|endoftext|>" in t] + [
    "<|endoftext|>Hello",
    "x<|endoftext|>",
    "<|endoftext|><|endoftext|>",
]


def random_texts(seed, count):
    """Random strings over character classes that stress the split pattern and the Unicode tables."""
    rng = random.Random(seed)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        " " * 8 + "\t\n\r\x0b\x0c",
        "\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\u0085",
        "'''''sStTmMdDrevll",
        "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~",
        "éüñçøåßÆŒ",
        "中文字日本語한국어",
        "٠١٢٣४५६۷",
        "²³¹¼½¾ⅠⅡⅫ①",
        "\u0301\u0308\u0303\u093f\u0947",
        "😀👍🏽❤️🎉🇺🇸\u200d\ufe0f",
        "ءابتثجحخ",
        "\u200b\u200c\ufeff\u00ad",
    ]
    out = []
    for _ in range(count):
        n = rng.randint(1, 24)
        out.append("".join(rng.choice(rng.choice(pools)) for _ in range(n)))
    return out


def random_code_point_texts(seed, count):
    """Random scalar values from the whole code space (the table is tested end to end, not just ASCII)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 8)):
            while True:
                cp = rng.randint(0, 0x10FFFF) if rng.random() < 0.5 else rng.randint(0, 0x2FFFF)
                if not 0xD800 <= cp <= 0xDFFF:
                    break
            chars.append(chr(cp))
            if rng.random() < 0.3:
                chars.append(rng.choice(" a1!"))
        out.append("".join(chars))
    return out


def gpt2_tokenizers():
    def base():
        tok = Tokenizer(models.BPE.from_file(VOCAB, MERGES))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        return tok

    plain = base()  # <|endoftext|> is an ordinary vocabulary entry: the text is never matched
    special = base()
    special.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    assert special.token_to_id("<|endoftext|>") == 50256
    return plain, special


def train_tiny():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.ByteLevel(add_prefix_space=True)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<|pad|>"],
        show_progress=False,
    )
    corpus = [t for t in TEXTS if t] * 3 + random_texts(7, 200)
    tok.train_from_iterator(corpus, trainer)
    tok.add_tokens([AddedToken("hello world", special=False)])
    return tok


def encode_all(tok, texts, allow_special):
    tok.encode_special_tokens = not allow_special
    rows = []
    for t in texts:
        ids = tok.encode(t).ids
        rows.append({"text": t, "allow_special": allow_special, "ids": ids})
    return rows


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    plain, special = gpt2_tokenizers()
    texts = TEXTS + random_texts(1, 150) + random_code_point_texts(2, 60)
    gpt2_rows = encode_all(plain, texts, False) + encode_all(special, SPECIAL_TEXTS, True)
    # The special-token-aware tokenizer with splitting switched off must agree with the plain one.
    assert encode_all(special, texts, False) == encode_all(plain, texts, False)

    tiny = train_tiny()
    tiny_path = os.path.join(OUT_DIR, "tiny_bytelevel.json")
    tiny.save(tiny_path, pretty=False)
    tiny_texts = TEXTS[:50] + ["hello world", "say hello world<|pad|>twice", "<|pad|><|endoftext|>"]
    tiny_rows = encode_all(tiny, tiny_texts, False) + encode_all(tiny, tiny_texts, True)

    fixture = {
        "about": "Reference encodings from Hugging Face tokenizers; generated by tests/tools/make_tokenizer_fixture.py",
        "tokenizers_version": tokenizers.__version__,
        "gpt2": gpt2_rows,
        "tiny": tiny_rows,
    }
    out = os.path.join(OUT_DIR, "gpt2_encodings.json")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(fixture, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(gpt2_rows)} GPT-2 and {len(tiny_rows)} tiny encodings to {out}")
    print(f"sizes: {os.path.getsize(out)} and {os.path.getsize(tiny_path)} bytes")


if __name__ == "__main__":
    main()
