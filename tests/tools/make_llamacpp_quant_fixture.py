#!/usr/bin/env python3
"""Writes GGUF files quantized by llama.cpp's own llama-quantize into tests/data/gguf/llamacpp-quant/,
for tests/engine/test_gguf_llamacpp_quant.cpp.

A random Llama (2 layers, n_embd 256, 4 heads over 1 key/value head, MLP 96, vocab 64, context 64,
tied embedding, no tokenizer) is written in f32 by gguf-py, then llama-quantize turns it into:

  tiny-llama-Q4_K_M.gguf   q4_K and q6_K, and for layer 0's ffn_down, whose rows (96) are not whole
                           256-weight blocks, q5_0: llama-quantize's fallback, which kept Q4_K_M files
                           of such models from opening here (layer 1's ffn_down: q8_0, the fallback
                           for q6_K)
  tiny-llama-Q5_K_M.gguf   q5_K and q6_K, and q5_1 for layer 0's ffn_down (the fallback for q5_K)

and reference.json holds {"ids": [...], "logits": [[...], ...], "dequantized": {"Q4_K_M": [[...], ...], ...}}:
the logits of every position of `ids` for the f32 original, and for each quantized file as gguf-py
dequantizes it (gguf.quants.dequantize), computed here in float64 with numpy (RMSNorm eps 1e-5, rotary embedding on
adjacent pairs as GGUF "llama" files store q/k, theta 10000, causal softmax attention over grouped
key/value heads scaled by 1/sqrt(64), SwiGLU, logits = final norm @ token_embd^T). The f32 original
itself (2 MB) is not kept.

To rerun, from the repository root, with llama-quantize built from llama.cpp (not part of the build):

    python3 -m venv /tmp/venv-gguf && /tmp/venv-gguf/bin/pip install gguf numpy
    /tmp/venv-gguf/bin/python tests/tools/make_llamacpp_quant_fixture.py --quantize PATH/TO/llama-quantize

Deterministic for a seed, gguf-py and llama.cpp version (recorded in manifest.json).
"""
import argparse
import importlib.metadata
import json
import os
import subprocess
import tempfile

import numpy as np
import gguf
from gguf.quants import dequantize

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.normpath(os.path.join(HERE, "..", "data", "gguf", "llamacpp-quant"))
SEED = 2026
L, C, NH, KVH, F, V, T = 2, 256, 4, 1, 96, 64, 64
HS = C // NH
EPS, THETA = 1e-5, 10000.0
TYPES = ("Q4_K_M", "Q5_K_M")


def random_weights(rng: np.random.Generator) -> dict:
    w = {"token_embd.weight": rng.standard_normal((V, C)) * 0.5,
         "output_norm.weight": 1.0 + 0.1 * rng.standard_normal(C)}
    for l in range(L):
        b = f"blk.{l}."
        w[b + "attn_norm.weight"] = 1.0 + 0.1 * rng.standard_normal(C)
        w[b + "attn_q.weight"] = rng.standard_normal((C, C)) * 0.08
        w[b + "attn_k.weight"] = rng.standard_normal((KVH * HS, C)) * 0.08
        w[b + "attn_v.weight"] = rng.standard_normal((KVH * HS, C)) * 0.08
        w[b + "attn_output.weight"] = rng.standard_normal((C, C)) * 0.08
        w[b + "ffn_norm.weight"] = 1.0 + 0.1 * rng.standard_normal(C)
        w[b + "ffn_gate.weight"] = rng.standard_normal((F, C)) * 0.08
        w[b + "ffn_up.weight"] = rng.standard_normal((F, C)) * 0.08
        w[b + "ffn_down.weight"] = rng.standard_normal((C, F)) * 0.08
    return {k: v.astype(np.float32) for k, v in w.items()}


def write_f32(path: str, w: dict) -> None:
    out = gguf.GGUFWriter(path, "llama")
    out.add_name("tiny-llama llama-quantize fixture")
    out.add_block_count(L)
    out.add_context_length(T)
    out.add_embedding_length(C)
    out.add_feed_forward_length(F)
    out.add_head_count(NH)
    out.add_head_count_kv(KVH)
    out.add_layer_norm_rms_eps(EPS)
    out.add_rope_freq_base(THETA)
    out.add_rope_dimension_count(HS)
    out.add_vocab_size(V)
    out.add_file_type(gguf.LlamaFileType.ALL_F32)
    for name, t in w.items():
        out.add_tensor(name, t)
    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()


def rmsnorm(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * g


def rope(x: np.ndarray) -> np.ndarray:
    """x (T, heads, HS): pairs (2i, 2i + 1) rotated by pos * THETA^(-2i / HS)."""
    pos = np.arange(x.shape[0], dtype=np.float64)[:, None]
    ang = pos * THETA ** (-np.arange(0, HS, 2, dtype=np.float64) / HS)[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def logits_of(w: dict, ids: list) -> np.ndarray:
    w = {k: v.astype(np.float64) for k, v in w.items()}
    n = len(ids)
    x = w["token_embd.weight"][ids]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    for l in range(L):
        b = f"blk.{l}."
        h = rmsnorm(x, w[b + "attn_norm.weight"])
        q = rope((h @ w[b + "attn_q.weight"].T).reshape(n, NH, HS))
        k = rope((h @ w[b + "attn_k.weight"].T).reshape(n, KVH, HS))
        v = (h @ w[b + "attn_v.weight"].T).reshape(n, KVH, HS)
        att = np.empty((n, NH, HS))
        for hd in range(NH):
            kv = hd // (NH // KVH)
            s = q[:, hd, :] @ k[:, kv, :].T / np.sqrt(HS) + mask
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            att[:, hd, :] = (p / p.sum(axis=-1, keepdims=True)) @ v[:, kv, :]
        x = x + att.reshape(n, C) @ w[b + "attn_output.weight"].T
        h = rmsnorm(x, w[b + "ffn_norm.weight"])
        g = h @ w[b + "ffn_gate.weight"].T
        x = x + ((g / (1 + np.exp(-g))) * (h @ w[b + "ffn_up.weight"].T)) @ w[b + "ffn_down.weight"].T
    return rmsnorm(x, w["output_norm.weight"]) @ w["token_embd.weight"].T


def dequantized_weights(path: str) -> dict:
    w = {}
    for t in gguf.GGUFReader(path).tensors:
        shape = [int(x) for x in reversed(t.shape)] if len(t.shape) > 1 else [-1]
        w[t.name] = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
    return w


def rounded(logits: np.ndarray) -> list:
    return [[round(float(v), 6) for v in row] for row in logits]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quantize", required=True, help="llama.cpp's llama-quantize binary")
    ap.add_argument("--llama-cpp", default="unknown", help="where that llama.cpp came from, for manifest.json")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    w = random_weights(rng)
    ids = [int(i) for i in rng.integers(0, V, 12)]
    os.makedirs(OUT_DIR, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, "tiny-llama-f32.gguf")
        write_f32(f32, w)
        for t in TYPES:
            subprocess.run([args.quantize, f32, os.path.join(OUT_DIR, f"tiny-llama-{t}.gguf"), t], check=True,
                           capture_output=True)
    dequantized = {t: rounded(logits_of(dequantized_weights(os.path.join(OUT_DIR, f"tiny-llama-{t}.gguf")), ids))
                   for t in TYPES}
    with open(os.path.join(OUT_DIR, "reference.json"), "w") as f:
        json.dump({"ids": ids, "logits": rounded(logits_of(w, ids)), "dequantized": dequantized}, f)
        f.write("\n")
    manifest = {"generator": "tests/tools/make_llamacpp_quant_fixture.py", "seed": SEED,
                "gguf_version": importlib.metadata.version("gguf"), "numpy_version": np.__version__,
                "llama_cpp": args.llama_cpp, "types": list(TYPES)}
    with open(os.path.join(OUT_DIR, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
