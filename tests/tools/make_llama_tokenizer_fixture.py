#!/usr/bin/env python3
"""Writes the reference data that tests/engine/test_tokenizer_llama.cpp compares against.

References:
  * Hugging Face `tokenizers`: two tiny byte-level BPE tokenizer.json files trained here with the
    exact pre-tokenizer layout of Llama-3 and Qwen2 (Sequence[Split(<family regex>, Isolated),
    ByteLevel(use_regex=false)]), so the C++ scanners are checked against the real regex engine.
  * `sentencepiece`: a tiny BPE model with byte fallback (identity normalisation, no whitespace
    collapsing, so its encodings are what llama.cpp's SPM tokenizer computes from the same vocabulary).
The C++ test needs no Python; rerun this only to change the texts or the references:

    python3 -m venv /tmp/venv-tok && /tmp/venv-tok/bin/pip install tokenizers sentencepiece
    /tmp/venv-tok/bin/python tests/tools/make_llama_tokenizer_fixture.py

Outputs (tests/data/tokenizer/):
  tiny_llama3.json, tiny_qwen2.json   tokenizer.json files
  tiny_spm_vocab.json                 pieces, scores and GGUF token types of the sentencepiece model
  llama_encodings.json                texts and reference ids for all three
"""
import json
import os
import random
import tempfile

import sentencepiece as spm
import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.normpath(os.path.join(HERE, "..", "data", "tokenizer"))

# Exactly as in Meta-Llama-3's and Qwen2's tokenizer.json.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")

TEXTS = [
    "",
    "Hello world",
    "Hello, world! How are you today?",
    "The quick brown fox jumps over the lazy dog.",
    "I'm don't we'll they've she'd it's you're",
    "I'M DON'T WE'LL THEY'VE SHE'D IT'S YOU'RE",
    "I'm DoN'T wE'Ll tHeY'vE",
    "'s 't 're 've 'm 'll 'd ''s ''' 'x 'S 'T 'RE 'Ve 'lL 'D",
    "rock 'n' roll, 'quoted', l'homme",
    "long s: 'ſ 'ſt x'ſt x'ſ X'ſ'Ll",  # U+017F folds to 's' under (?i)
    "1 12 123 1234 12345 123456 1234567",
    "a1b22c333d4444e55555f666666g7777777",
    "3.14159 -42 1,000,000 0x1F 2024-01-01",
    "Numbers: ½ ² ³ ⅓ Ⅻ ٣٤٥ ४२ 五",
    "line one\nline two\n",
    "\n",
    "\n\n\n",
    "para one\n\n\npara two",
    "windows\r\nline\r\nendings\r\n",
    "\r\n\r\n\r\n",
    "cr only\rand\r\rmore",
    "mixed \t\n whitespace \n\t end",
    " \n ",
    "  \n  hello",
    "end with newline and spaces \n   ",
    "Punctuation!!!\n??? ...\n\n--- ***\r\n### @@@",
    "wow!\nok?\r\n\r\nyes.",
    " ?!\n",
    "!hello ?world ,x .y",
    "?!abc",
    "\thello \u3000中文 \u00a0x",
    " leading space",
    "  two leading spaces",
    "trailing space ",
    "trailing spaces   ",
    "   ",
    " ",
    "a  b   c    d",
    "tab\tseparated\tvalues",
    "\t\tindented with tabs",
    "\t!!!",
    "Emoji: 😀😃😄 👍🏽 ❤️ 🎉",
    "ZWJ: 👨‍👩‍👧‍👦 🏳️‍🌈 👩🏾‍💻",
    "中文测试：你好，世界！",
    "日本語のテキスト、カタカナとひらがな。",
    "한국어 텍스트입니다",
    "Accents: café naïve résumé Zürich São Paulo Ångström",
    "Combining: e\u0301 a\u0308 n\u0303",
    "Mixed: English中文123русский😀عربي",
    "def foo(x):\n    return x * 2  # comment\n",
    "    indented code\n        more indented\n",
    "int main() { printf(\"%d\\n\", 42); return 0; }",
    "x" * 500,
    "9" * 100,
    "!" * 100,
    " " * 50,
    "\n" * 30,
    "Control chars \x01\x1f\x7f end",
    "Non-breaking\u00a0space and\u2028line sep\u0085nel",
]


def random_texts(seed, count):
    """Random strings over the character classes the split patterns distinguish."""
    rng = random.Random(seed)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        " " * 8 + "\t\n\r\x0b\x0c",
        "\r\n\r\n\n",
        "\u00a0\u2000\u2028\u3000\u0085",
        "'''''sStTmMdDrReEvVlL",
        "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~",
        "éüñçøåßÆŒ",
        "中文字日本語한국어",
        "٠١٢٣४५६",
        "²³¹¼½Ⅻ①",
        "\u0301\u0308",
        "😀👍🏽❤️🎉\u200d\ufe0f",
    ]
    out = []
    for _ in range(count):
        n = rng.randint(1, 24)
        out.append("".join(rng.choice(rng.choice(pools)) for _ in range(n)))
    return out


def train_split(pattern):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        show_progress=False,
    )
    corpus = [t for t in TEXTS if t] * 3 + random_texts(11, 200)
    tok.train_from_iterator(corpus, trainer)
    return tok


def split_rows(tok, texts):
    rows = []
    for t in texts:
        rows.append({"text": t, "ids": tok.encode(t, add_special_tokens=False).ids})
    return rows


SPM_TEXTS = [t for t in TEXTS if "\r" not in t and "\x01" not in t] + [
    "unseen: 🚀🛸 Ω ∑ ﷽",
    "bytes fallback 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "<s> and </s> and <unk> are plain text here",  # control pieces are never spelled by text
    "<0x41> is not a byte either",
]


def train_spm(workdir):
    corpus = [t for t in TEXTS if t.strip() and "\r" not in t] * 4 + random_texts(5, 300)
    corpus = [t.replace("\n", " ") for t in corpus if t.replace("\n", " ").strip()]
    path = os.path.join(workdir, "corpus.txt")
    with open(path, "w", encoding="utf-8") as f:
        for t in corpus:
            f.write(t + "\n")
    prefix = os.path.join(workdir, "spm")
    spm.SentencePieceTrainer.train(
        input=path, model_prefix=prefix, model_type="bpe", vocab_size=700, byte_fallback=True,
        normalization_rule_name="identity", remove_extra_whitespaces=False, add_dummy_prefix=True,
        character_coverage=0.9995, bos_id=1, eos_id=2, unk_id=0, pad_id=-1, minloglevel=2,
        hard_vocab_limit=False)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def spm_vocab(sp):
    pieces, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        pieces.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_unused(i):
            types.append(5)
        elif sp.is_byte(i):
            types.append(6)
        else:
            types.append(1)
    return {"tokens": pieces, "scores": scores, "token_types": types, "bos": sp.bos_id(), "eos": sp.eos_id(),
            "unk": sp.unk_id(), "add_space_prefix": True}


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    texts = TEXTS + random_texts(1, 200)
    fixture = {
        "about": "Reference encodings; generated by tests/tools/make_llama_tokenizer_fixture.py",
        "tokenizers_version": tokenizers.__version__,
        "sentencepiece_version": spm.__version__,
    }
    for name, pattern in (("llama3", LLAMA3_PATTERN), ("qwen2", QWEN2_PATTERN)):
        tok = train_split(pattern)
        path = os.path.join(OUT_DIR, f"tiny_{name}.json")
        tok.save(path, pretty=False)
        fixture[name] = split_rows(tok, texts)
        # The pre-tokenizer splits alone, as byte strings, for a direct check of the scanner.
        splitter = pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
        fixture[name + "_splits"] = [
            {"text": t, "pieces": [p for p, _ in splitter.pre_tokenize_str(t)]} for t in texts]
        print(f"{path}: {os.path.getsize(path)} bytes")

    with tempfile.TemporaryDirectory() as d:
        sp = train_spm(d)
    vocab = spm_vocab(sp)
    spm_texts = SPM_TEXTS + [t for t in random_texts(3, 100) if "\r" not in t]
    fixture["spm"] = [{"text": t, "ids": sp.encode(t)} for t in spm_texts]
    vpath = os.path.join(OUT_DIR, "tiny_spm_vocab.json")
    with open(vpath, "w", encoding="utf-8", newline="\n") as f:
        json.dump(vocab, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"{vpath}: {os.path.getsize(vpath)} bytes, {len(vocab['tokens'])} tokens")

    out = os.path.join(OUT_DIR, "llama_encodings.json")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(fixture, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"{out}: {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
