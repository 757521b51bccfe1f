#!/usr/bin/env python3
"""Writes the reference blocks that tests/engine/test_quant.cpp compares our quantizers against.

Reference: the `gguf` PyPI package (gguf.quants, numpy ports of ggml's reference quantizers, written
independently of this project). The C++ test needs no Python; rerun only to change the inputs:

    /opt/venvs/llmwb-ref/bin/python tests/tools/make_quant_fixture.py   (any venv with gguf and numpy)

Outputs in tests/data/quant/ (all little-endian, a few tens of KB in total, deterministic for a seed
and gguf version):
  q8_0_input.f32, q8_0_blocks.bin   f32 inputs and gguf-py's q8_0 blocks (our quantizer must match
                                    byte for byte)
  q4_0_input.f32, q4_0_blocks.bin   the same for q4_0
  q4_K_blocks.bin, q4_K_values.f32  random valid q4_K super-blocks and gguf-py's dequantization
  q6_K_blocks.bin, q6_K_values.f32  the same for q6_K
  q4_1_blocks.bin, q4_1_values.f32  q4_1 blocks (gguf-py's quantization of the inputs above, then random
                                    valid blocks) and gguf-py's dequantization; likewise q5_0, q5_1
  q5_K_blocks.bin, q5_K_values.f32  random valid q5_K super-blocks and gguf-py's dequantization
  manifest.json                     element counts and the gguf version used
"""
import importlib.metadata
import json
import os

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize, quantize

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.normpath(os.path.join(HERE, "..", "data", "quant"))
SEED = 1234


def block_inputs(rng: np.random.Generator) -> np.ndarray:
    """32-wide blocks covering the cases where rounding rules differ between implementations."""
    blocks = [
        np.arange(32, dtype=np.float32),                         # 0..31, positive max
        -np.arange(32, dtype=np.float32),                        # negative max (q4_0 sign of d)
        np.zeros(32, dtype=np.float32),                          # d == 0
        np.where(np.arange(32) == 7, 1000.0, 0.01).astype(np.float32),  # one large outlier
        np.where(np.arange(32) % 2 == 0, 3.0, -3.0).astype(np.float32),  # +-max tie: first wins
        (np.arange(32, dtype=np.float32) - 15.5) * 0.25,         # values on half steps
        np.full(32, 1e-30, dtype=np.float32),                    # scale underflows in f16
        np.full(32, 70000.0, dtype=np.float32) * np.where(np.arange(32) < 16, 1, -1).astype(np.float32),
    ]
    for scale in (1e-3, 0.05, 1.0, 30.0):
        for _ in range(6):
            blocks.append((rng.standard_normal(32) * scale).astype(np.float32))
    for _ in range(4):  # heavy tails, like real weight matrices
        blocks.append((rng.standard_t(2, 32) * 0.02).astype(np.float32))
    return np.concatenate(blocks).astype(np.float32)


def random_q4_K(rng: np.random.Generator, n_blocks: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n_blocks, 144), dtype=np.uint8)
    # d, dmin: finite f16 values of realistic size (random bits could be inf/nan).
    d = (rng.uniform(1e-4, 2e-2, n_blocks)).astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    dmin = (rng.uniform(1e-4, 2e-2, n_blocks)).astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    raw[:, 0:2] = d
    raw[:, 2:4] = dmin
    return raw


def random_q6_K(rng: np.random.Generator, n_blocks: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n_blocks, 210), dtype=np.uint8)
    d = (rng.uniform(1e-4, 2e-2, n_blocks) * np.where(np.arange(n_blocks) % 3 == 0, -1, 1)).astype(np.float16)
    raw[:, 208:210] = d.view(np.uint8).reshape(n_blocks, 2)
    return raw


def random_32(rng: np.random.Generator, n_blocks: int, block_bytes: int, has_min: bool) -> np.ndarray:
    """Random q4_1 / q5_0 / q5_1 blocks: any quant bits, finite f16 scale (and min, of either sign)."""
    raw = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    d = (rng.uniform(1e-4, 2e-2, n_blocks) * np.where(np.arange(n_blocks) % 4 == 1, -1, 1)).astype(np.float16)
    raw[:, 0:2] = d.view(np.uint8).reshape(n_blocks, 2)
    if has_min:
        m = rng.uniform(-0.2, 0.1, n_blocks).astype(np.float16)
        raw[:, 2:4] = m.view(np.uint8).reshape(n_blocks, 2)
    return raw


def random_q5_K(rng: np.random.Generator, n_blocks: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n_blocks, 176), dtype=np.uint8)
    raw[:, 0:2] = rng.uniform(1e-4, 2e-2, n_blocks).astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    raw[:, 2:4] = rng.uniform(1e-4, 2e-2, n_blocks).astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    return raw


def main() -> None:
    rng = np.random.default_rng(SEED)
    os.makedirs(OUT_DIR, exist_ok=True)
    manifest = {"generator": "tests/tools/make_quant_fixture.py", "gguf_version": importlib.metadata.version("gguf"),
                "numpy_version": np.__version__, "seed": SEED}

    x = block_inputs(rng)
    for name, qtype in (("q8_0", T.Q8_0), ("q4_0", T.Q4_0)):
        blocks = quantize(x.reshape(1, -1), qtype)
        x.tofile(os.path.join(OUT_DIR, f"{name}_input.f32"))
        blocks.tofile(os.path.join(OUT_DIR, f"{name}_blocks.bin"))
        manifest[name] = {"elements": int(x.size), "bytes": int(blocks.size)}

    for name, qtype, gen, nb in (("q4_K", T.Q4_K, random_q4_K, 8), ("q6_K", T.Q6_K, random_q6_K, 8)):
        raw = gen(rng, nb)
        values = dequantize(raw.reshape(1, -1), qtype).astype(np.float32).reshape(-1)
        raw.tofile(os.path.join(OUT_DIR, f"{name}_blocks.bin"))
        values.tofile(os.path.join(OUT_DIR, f"{name}_values.f32"))
        manifest[name] = {"elements": int(values.size), "bytes": int(raw.size)}

    # The types llama-quantize writes beside q4_K / q6_K: realistic blocks from gguf-py's own quantizer
    # of the inputs above, then random bit patterns (every quant and fifth-bit value).
    for name, qtype, block_bytes, has_min in (("q4_1", T.Q4_1, 20, True), ("q5_0", T.Q5_0, 22, False),
                                              ("q5_1", T.Q5_1, 24, True)):
        real = quantize(x.reshape(1, -1), qtype).reshape(-1, block_bytes)
        # The +-70000 block's min overflows f16 (gguf-py warns): a block no real file holds.
        finite = np.isfinite(real[:, 0:4 if has_min else 2].copy().view(np.float16)).all(axis=1)
        raw = np.concatenate([real[finite], random_32(rng, 24, block_bytes, has_min)])
        values = dequantize(raw.reshape(1, -1), qtype).astype(np.float32).reshape(-1)
        raw.tofile(os.path.join(OUT_DIR, f"{name}_blocks.bin"))
        values.tofile(os.path.join(OUT_DIR, f"{name}_values.f32"))
        manifest[name] = {"elements": int(values.size), "bytes": int(raw.size)}
    raw = random_q5_K(rng, 8)
    values = dequantize(raw.reshape(1, -1), T.Q5_K).astype(np.float32).reshape(-1)
    raw.tofile(os.path.join(OUT_DIR, "q5_K_blocks.bin"))
    values.tofile(os.path.join(OUT_DIR, "q5_K_values.f32"))
    manifest["q5_K"] = {"elements": int(values.size), "bytes": int(raw.size)}

    with open(os.path.join(OUT_DIR, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
