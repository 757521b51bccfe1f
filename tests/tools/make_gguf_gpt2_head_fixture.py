#!/usr/bin/env python3
"""Writes the GPT-2 output-head and vocabulary-only GGUF fixtures into tests/data/gguf/.

An independent writer and reference (gguf-py, the llama.cpp project's Python package, and numpy):

  tiny-gpt2-untied-q8_0.gguf  a random GPT-2 (2 layers, n_embd 64, 4 heads, vocab 128, context 32,
                              MLP 128) whose 2-D weights are q8_0 (gguf.quants.quantize) and whose
                              output.weight is its own matrix, not token_embd (an untied head, as
                              llama-quantize leaves GPT-2 files whose head and embedding it encodes
                              differently). 1-D tensors and position_embd are f32. No tokenizer.
  tiny-gpt2-untied.json       {"ids": [...], "logits": [[...], ...]}: the logits of every position of
                              `ids`, computed here in float64 from the q8_0 weights as gguf-py
                              dequantizes them (LayerNorm eps 1e-5, tanh GELU, causal softmax
                              attention scaled by 1/sqrt(16), logits = final norm @ output.weight^T).
  vocab-only-gpt2.gguf        tiny-gpt2-f32.gguf's metadata (general.architecture gpt2 and the
                              tokenizer.ggml.* keys) without a single tensor, like llama.cpp's
                              models/ggml-vocab-*.gguf; tokens.json holds a sample and its ids.

To rerun, from the repository root (deterministic; gguf 0.19, numpy 2.4):

    python3 -m venv /tmp/venv-gguf && /tmp/venv-gguf/bin/pip install gguf
    /tmp/venv-gguf/bin/python tests/tools/make_gguf_gpt2_head_fixture.py
"""
import json
import os

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gguf")
L, C, NH, V, T, F = 2, 64, 4, 128, 32, 128
EPS = 1e-5


def random_model(rng):
    def mat(rows, cols, s=0.15):
        return (rng.standard_normal((rows, cols)) * s).astype(np.float32)

    def vec(n, s=0.05, offset=0.0):
        return (offset + rng.standard_normal(n) * s).astype(np.float32)

    t = [("token_embd.weight", mat(V, C, 0.5)), ("position_embd.weight", mat(T, C, 0.1))]
    for layer in range(L):
        b = f"blk.{layer}."
        t += [(b + "attn_norm.weight", vec(C, 0.1, 1.0)), (b + "attn_norm.bias", vec(C)),
              (b + "attn_qkv.weight", mat(3 * C, C)), (b + "attn_qkv.bias", vec(3 * C)),
              (b + "attn_output.weight", mat(C, C)), (b + "attn_output.bias", vec(C)),
              (b + "ffn_norm.weight", vec(C, 0.1, 1.0)), (b + "ffn_norm.bias", vec(C)),
              (b + "ffn_up.weight", mat(F, C)), (b + "ffn_up.bias", vec(F)),
              (b + "ffn_down.weight", mat(C, F)), (b + "ffn_down.bias", vec(C))]
    t += [("output_norm.weight", vec(C, 0.1, 1.0)), ("output_norm.bias", vec(C)), ("output.weight", mat(V, C, 0.5))]
    return t


def encode(name, w):
    """The stored form of a tensor (q8_0 for 2-D weights other than position_embd) and its float64 value."""
    if w.ndim == 2 and name != "position_embd.weight":
        q = gguf.quants.quantize(w, Q.Q8_0)
        return q, Q.Q8_0, gguf.quants.dequantize(q, Q.Q8_0).astype(np.float64)
    return w, None, w.astype(np.float64)


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * g + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def forward(w, ids):
    n, hs = len(ids), C // NH
    x = w["token_embd.weight"][ids] + w["position_embd.weight"][:n]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    for layer in range(L):
        p = lambda s: w[f"blk.{layer}.{s}"]
        h = layer_norm(x, p("attn_norm.weight"), p("attn_norm.bias"))
        qkv = h @ p("attn_qkv.weight").T + p("attn_qkv.bias")
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(n, NH, hs).transpose(1, 0, 2) for i in range(3))
        att = q @ k.transpose(0, 2, 1) / np.sqrt(hs) + mask
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(1, 0, 2).reshape(n, C)
        x = x + y @ p("attn_output.weight").T + p("attn_output.bias")
        h = layer_norm(x, p("ffn_norm.weight"), p("ffn_norm.bias"))
        x = x + gelu(h @ p("ffn_up.weight").T + p("ffn_up.bias")) @ p("ffn_down.weight").T + p("ffn_down.bias")
    h = layer_norm(x, w["output_norm.weight"], w["output_norm.bias"])
    return h @ w["output.weight"].T


def write_untied(rng):
    wr = gguf.GGUFWriter(os.path.join(OUT, "tiny-gpt2-untied-q8_0.gguf"), "gpt2")
    wr.add_name("tiny-gpt2-untied")
    wr.add_context_length(T)
    wr.add_embedding_length(C)
    wr.add_block_count(L)
    wr.add_feed_forward_length(F)
    wr.add_head_count(NH)
    wr.add_layer_norm_eps(EPS)
    wr.add_file_type(7)  # mostly q8_0
    values = {}
    for name, w in random_model(rng):
        stored, qtype, values[name] = encode(name, w)
        wr.add_tensor(name, stored, raw_dtype=qtype)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    ids = [int(i) for i in rng.integers(0, V, 10)]
    logits = forward(values, np.array(ids))
    # The head really is untied: logits through token_embd would be far off.
    assert np.abs(logits).max() > 1.0
    with open(os.path.join(OUT, "tiny-gpt2-untied.json"), "w") as f:
        json.dump({"ids": ids, "logits": [[float(f"{v:.7g}") for v in row] for row in logits]}, f)
        f.write("\n")


def write_vocab_only():
    src = gguf.GGUFReader(os.path.join(OUT, "tiny-gpt2-f32.gguf"))
    wr = gguf.GGUFWriter(os.path.join(OUT, "vocab-only-gpt2.gguf"), "gpt2")
    wr.add_name("vocab-only-gpt2")
    for key, field in src.fields.items():
        if not key.startswith("tokenizer."):
            continue
        vt = field.types[0]
        value = field.contents()
        if vt == gguf.GGUFValueType.ARRAY:
            wr.add_key_value(key, value, vt, sub_type=field.types[-1])
        else:
            wr.add_key_value(key, value, vt)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


if __name__ == "__main__":
    write_untied(np.random.default_rng(20261207))
    write_vocab_only()
