#!/usr/bin/env python3
"""Writes tests/data/gguf/small.gguf and small.json: a GGUF written by an independent writer.

The gguf PyPI package (gguf-py, the llama.cpp project's Python writer) writes a small file with
metadata of many value types (including string and float arrays) and F32/F16/Q8_0 tensors; the JSON
lists what the file must contain, so tests/engine/test_gguf.cpp can check that our reader sees
exactly that. Tensor data is given as the raw little-endian bytes in hex (Q8_0 blocks are built
here by hand: f16 scale then 32 int8 values), shapes in GGUF order (ne[0] first).

To rerun, from the repository root (deterministic: no randomness):

    /opt/venvs/llmwb-ref/bin/python tests/tools/make_gguf_fixture.py
"""
import json
import os
import sys

import numpy as np
import gguf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gguf")


def q8_0_blocks(values):
    """Quantizes a float array (length multiple of 32) into Q8_0 bytes: per block f16 d, 32 int8."""
    values = np.asarray(values, dtype=np.float32).reshape(-1, 32)
    out = bytearray()
    for block in values:
        amax = float(np.abs(block).max())
        d = amax / 127.0 if amax > 0 else 0.0
        q = np.zeros(32, dtype=np.int8) if d == 0 else np.clip(np.round(block / d), -127, 127).astype(np.int8)
        out += np.float16(d).tobytes() + q.tobytes()
    return bytes(out)


def main():
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "small.gguf")
    w = gguf.GGUFWriter(path, arch="tinytest")
    w.add_name("small fixture")
    w.add_uint32("tinytest.context_length", 128)
    w.add_int32("test.i32", -123456)
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 65000)
    w.add_int16("test.i16", -32000)
    w.add_uint64("test.u64", 2**63 + 5)
    w.add_int64("test.i64", -(2**62))
    w.add_float32("test.f32", 0.15625)
    w.add_float64("test.f64", 1.0 / 3.0)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "caf\u00e9 \u2603 \"quoted\"")
    w.add_array("tokenizer.ggml.tokens", ["<|endoftext|>", "a", "b", "\u0120the", "", "\u00e9"])
    w.add_array("tokenizer.ggml.scores", [0.0, -1.5, 2.25, 3.0, -4.0, 5.5])
    w.add_array("test.i32_array", [1, -2, 3])  # gguf-py picks INT32 for Python ints

    f32 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5 - 3.0  # numpy shape -> GGUF ne [4,3,2]
    f16 = (np.arange(16, dtype=np.float32).reshape(4, 4) / 8.0).astype(np.float16)
    q_src = np.sin(np.arange(64, dtype=np.float32)) * 3.0
    q8 = np.frombuffer(q8_0_blocks(q_src), dtype=np.uint8).reshape(2, 34)  # 2 rows x 32 elements
    w.add_tensor("blk.0.f32", f32)
    w.add_tensor("blk.0.f16", f16)
    w.add_tensor("blk.0.q8_0", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)  # byte shape (2, 34)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    expected = {
        "version": 3,
        "alignment": 32,
        "metadata": {
            "general.architecture": ["STRING", "tinytest"],
            "general.name": ["STRING", "small fixture"],
            "tinytest.context_length": ["UINT32", 128],
            "test.i32": ["INT32", -123456],
            "test.u8": ["UINT8", 200],
            "test.i8": ["INT8", -100],
            "test.u16": ["UINT16", 65000],
            "test.i16": ["INT16", -32000],
            "test.u64": ["UINT64", str(2**63 + 5)],  # as a string: JSON doubles cannot hold it
            "test.i64": ["INT64", str(-(2**62))],
            "test.f32": ["FLOAT32", 0.15625],
            "test.f64": ["FLOAT64", 1.0 / 3.0],
            "test.bool": ["BOOL", True],
            "test.string": ["STRING", "caf\u00e9 \u2603 \"quoted\""],
            "tokenizer.ggml.tokens": ["ARRAY:STRING", ["<|endoftext|>", "a", "b", "\u0120the", "", "\u00e9"]],
            "tokenizer.ggml.scores": ["ARRAY:FLOAT32", [0.0, -1.5, 2.25, 3.0, -4.0, 5.5]],
            "test.i32_array": ["ARRAY:INT32", [1, -2, 3]],
        },
        "tensors": [
            {"name": "blk.0.f32", "type": 0, "shape": [4, 3, 2], "data_hex": f32.tobytes().hex()},
            {"name": "blk.0.f16", "type": 1, "shape": [4, 4], "data_hex": f16.tobytes().hex()},
            {"name": "blk.0.q8_0", "type": 8, "shape": [32, 2], "data_hex": q8.tobytes().hex()},
        ],
    }
    with open(os.path.join(OUT, "small.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(path, os.path.getsize(path), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
