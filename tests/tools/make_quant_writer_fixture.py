#!/usr/bin/env python3
"""Checks our q4_1 / q5_0 / q5_1 / q5_K quantizers' GGUF output with gguf-py, for
tests/engine/test_quant.cpp (written_gguf_reads_the_same_in_gguf_py).

gguf-py (the `gguf` PyPI package, written independently of this project) is the reference reader: it
must find the tensors of a GGUF file our writer made with our quantizers, with their types and shapes,
and dequantize them to exactly the values our own dequantizers give. Steps:

  1. writes the f32 inputs (blocks where rounding rules show, then Gaussian and heavy-tailed weights)
     to tests/data/quant/writer_input.f32;
  2. runs the test binary, which quantizes them with our four quantizers and writes writer.gguf
     (one tensor per type, named after it, ne = [256, 4]) through engine::io::write_gguf;
  3. reads writer.gguf with gguf-py and stores its dequantization, the four tensors one after the other,
     in writer_gguf_py.f32.

The C++ test then needs no Python: it quantizes writer_input.f32 again (the bytes must equal
writer.gguf's, so the committed file is what our code writes) and dequantizes them (the values must
equal writer_gguf_py.f32). Rerun after a change to the quantizers:

    python3 -m venv /tmp/ggufvenv && /tmp/ggufvenv/bin/pip install gguf numpy
    /tmp/ggufvenv/bin/python tests/tools/make_quant_writer_fixture.py build/tests/test_quant
"""
import importlib.metadata
import json
import os
import subprocess
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGUFReader
from gguf.quants import dequantize

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.normpath(os.path.join(HERE, "..", "data", "quant"))
SEED = 77
TYPES = (("q4_1", T.Q4_1), ("q5_0", T.Q5_0), ("q5_1", T.Q5_1), ("q5_K", T.Q5_K))


def inputs(rng: np.random.Generator) -> np.ndarray:
    """1024 values: 4 rows of 256 (whole q5_K super-blocks), the first blocks chosen by hand."""
    ramp = np.arange(32, dtype=np.float32)
    blocks = [
        np.zeros(32, np.float32),                                        # every scale 0
        np.full(32, 0.75, np.float32), np.full(32, -0.3, np.float32),    # constants of either sign
        0.1 + 0.01 * ramp, -0.1 - 0.013 * ramp,                          # all positive, all negative
        ramp, (ramp - 15.5) * 0.25,                                      # ramps, half steps
        np.where(ramp == 9, -5.0, 0.001 * ramp).astype(np.float32),      # one outlier
        1e-6 * (ramp - 16),                                              # f16-subnormal scales
        np.where(ramp % 2 == 0, 3.0, -3.0).astype(np.float32),           # +-max tie
    ]
    x = [b.astype(np.float32) for b in blocks]
    n = 1024 - 32 * len(x)
    x.append((rng.standard_normal(n // 2) * 0.05).astype(np.float32))
    x.append((rng.standard_t(2, n - n // 2) * 0.02).astype(np.float32))  # heavy tails, like real weights
    return np.concatenate(x).astype(np.float32)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_quant_writer_fixture.py PATH/TO/test_quant")
    rng = np.random.default_rng(SEED)
    x = inputs(rng)
    assert x.size == 1024
    x.tofile(os.path.join(OUT_DIR, "writer_input.f32"))
    gguf_path = os.path.join(OUT_DIR, "writer.gguf")
    env = dict(os.environ, WB_WRITE_QUANT_WRITER_FIXTURE=gguf_path)
    subprocess.run([sys.argv[1], "written_gguf_reads_the_same_in_gguf_py"], env=env, check=True)

    reader = GGUFReader(gguf_path)
    by_name = {t.name: t for t in reader.tensors}
    values = []
    for name, qtype in TYPES:
        t = by_name[name]
        assert t.tensor_type == qtype, (name, t.tensor_type)
        assert [int(v) for v in t.shape] == [256, 4], (name, t.shape)
        v = dequantize(np.asarray(t.data), qtype).astype(np.float32).reshape(-1)
        assert v.size == 1024
        err = np.abs(v - x)
        print(f"{name}: max |error| {err.max():.3g}, RMS {np.sqrt((err ** 2).mean()):.3g} (gguf-py's reading)")
        values.append(v)
    np.concatenate(values).tofile(os.path.join(OUT_DIR, "writer_gguf_py.f32"))
    with open(os.path.join(OUT_DIR, "writer_manifest.json"), "w") as f:
        json.dump({"generator": "tests/tools/make_quant_writer_fixture.py", "seed": SEED,
                   "gguf_version": importlib.metadata.version("gguf"), "numpy_version": np.__version__,
                   "tensors": [name for name, _ in TYPES], "elements_each": 1024}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
