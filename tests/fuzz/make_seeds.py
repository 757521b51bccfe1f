#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, derived from the repository's test fixtures.

Usage: make_seeds.py OUT_DIR   (writes OUT_DIR/<target>/<seed>; scripts/fuzz.sh calls it)

Seeds are cut down from tests/data (never copies of the large model files): GGUF files are rebuilt
with their metadata only or with a few small tensors of every type the reader knows, tokenizer.json
vocabularies are also written as vocab.json + merges.txt, and the formats without a fixture file
(llm.c checkpoints, .wbinspect snapshots, JSONL data sets) are written here from their layout.
Multi-part inputs follow the targets' conventions (a mode byte, NUL-separated parts; see each
fuzz_*.cpp). Plain python3, no packages.
"""
import json
import os
import struct
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")


def read(*parts):
    with open(os.path.join(DATA, *parts), "rb") as f:
        return f.read()


# --- GGUF (ggml docs/gguf.md, version 3) -------------------------------------------------------
SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_read_value(b, pos, t):
    if t in SCALAR:
        n = struct.calcsize(SCALAR[t])
        return b[pos:pos + n], pos + n
    if t == 8:
        (n,) = struct.unpack_from("<Q", b, pos)
        return b[pos:pos + 8 + n], pos + 8 + n
    if t == 9:
        et, n = struct.unpack_from("<IQ", b, pos)
        start, p = pos, pos + 12
        for _ in range(n):
            _, p = gguf_read_value(b, p, et)
        return b[start:p], p
    raise ValueError("GGUF type %d" % t)


def gguf_metadata(b):
    """[(key, type, raw value bytes)] of a GGUF file."""
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", b, 0)
    assert magic == b"GGUF"
    pos, kvs = 24, []
    for _ in range(n_kv):
        (n,) = struct.unpack_from("<Q", b, pos)
        key = b[pos + 8:pos + 8 + n]
        (t,) = struct.unpack_from("<I", b, pos + 8 + n)
        raw, pos = gguf_read_value(b, pos + 12 + n, t)
        kvs.append((key, t, raw))
    return kvs


def gguf_string(s):
    return struct.pack("<Q", len(s)) + s


def gguf_file(kvs, tensors=(), alignment=32):
    """kvs: [(key bytes, type, raw)], tensors: [(name, ggml type, shape, data)]."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, t, raw in kvs:
        out += gguf_string(key) + struct.pack("<I", t) + raw
    offset = 0
    for name, t, shape, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
        out += struct.pack("<IQ", t, offset)
        offset += (len(data) + alignment - 1) // alignment * alignment
    if tensors:
        out += b"\0" * (-len(out) % alignment)
        for _, _, _, data in tensors:
            out += data + b"\0" * (-len(data) % alignment)
    return out


def gguf_seeds():
    """Small GGUF files: the gguf-py fixture, metadata-only copies of the model fixtures (their
    vocabularies), and one file with a tensor of every type the reader knows."""
    seeds = {"small.gguf": read("gguf", "small.gguf")}
    for name in ("tiny-gpt2-f32", "tiny-llama-f32", "tiny-qwen2-q8_0"):
        seeds[name + "-metadata.gguf"] = gguf_file(gguf_metadata(read("gguf", name + ".gguf")))
    arch = (b"general.architecture", 8, gguf_string(b"gpt2"))
    q = {t: read("quant", f) for t, f in ((8, "q8_0_blocks.bin"), (2, "q4_0_blocks.bin"), (12, "q4_K_blocks.bin"),
                                          (14, "q6_K_blocks.bin"))}
    f32 = struct.pack("<8f", *[0.5 * i - 1 for i in range(8)])
    tensors = [(b"f32", 0, [4, 2], f32), (b"f16", 1, [4, 2], bytes(range(16))), (b"bf16", 30, [8], bytes(range(16))),
               (b"q8_0", 8, [32, 2], q[8][:68]), (b"q4_0", 2, [32, 2], q[2][:36]), (b"q4_K", 12, [256], q[12][:144]),
               (b"q6_K", 14, [256], q[14][:210]), (b"i8", 24, [4], b"\1\2\3\4"), (b"i16", 25, [2], b"\1\0\2\0"),
               (b"i32", 26, [1], b"\7\0\0\0"), (b"i64", 27, [1], b"\7" + b"\0" * 7), (b"f64", 28, [1], struct.pack("<d", 1.5))]
    seeds["every-type.gguf"] = gguf_file([arch], tensors)
    seeds["align-8.gguf"] = gguf_file([arch, (b"general.alignment", 4, struct.pack("<I", 8))], tensors[:4], 8)
    return seeds


# --- tokenizers ---------------------------------------------------------------------------------
SAMPLE_TEXT = "Hello world! It's 2024: naïve café, 中文, emoji \U0001F600 <|endoftext|> <|im_start|>user\n  tabs\tend".encode()


def tokenizer_seeds():
    seeds = {}
    for name in ("tiny_bytelevel", "tiny_llama3", "tiny_qwen2", "tiny_qwen2_nfc"):
        j = read("tokenizer", name + ".json")
        seeds["json-" + name] = b"\0" + SAMPLE_TEXT + b"\0" + j
        model = json.loads(j)["model"]
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        vocab = json.dumps(model["vocab"], ensure_ascii=False).encode()
        seeds["gpt2-" + name] = b"\1" + SAMPLE_TEXT + b"\0" + vocab + b"\0" + ("#version: 0.2\n" + "\n".join(merges)).encode()
    seeds["json-chat"] = b"\0" + SAMPLE_TEXT + b"\0" + read("chat", "tiny_chat_tokenizer.json")
    for name in ("tiny-gpt2-f32", "tiny-llama-f32", "tiny-qwen2-q8_0"):
        meta = gguf_file(gguf_metadata(read("gguf", name + ".gguf")))
        seeds["gguf-" + name] = b"\2" + SAMPLE_TEXT + b"\0" + meta
    return seeds


# --- safetensors + config.json ------------------------------------------------------------------
def safetensors_seeds():
    seeds = {}
    for d in ("tiny-gpt2", "tiny-llama", "tiny-qwen2"):
        seeds[d + "-config.json"] = read(d, "config.json")
    for d in ("tiny-gpt2-lora", "tiny-llama-lora"):
        seeds[d + "-adapter_config.json"] = read(d, "adapter_config.json")
    # Real headers with small tensors: a header cut from a fixture, its tensors re-laid out tiny.
    header = {"__metadata__": {"format": "pt"}}
    data, off = b"", 0
    for name, dt, shape, size in (("a", "F32", [2, 2], 16), ("b", "F16", [3], 6), ("c", "BF16", [1, 2], 4),
                                  ("d", "F64", [1], 8), ("e", "I64", [2], 16), ("f", "U8", [3], 3)):
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + size]}
        data += bytes((i * 37) % 251 for i in range(size))
        off += size
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    seeds["small.safetensors"] = struct.pack("<Q", len(h)) + h + data
    real = read("tiny-gpt2-lora", "adapter_model.safetensors")
    (n,) = struct.unpack_from("<Q", real, 0)
    seeds["lora-header-only.safetensors"] = real[:8 + n]  # a real header, its data cut off
    return seeds


# --- chat templates -----------------------------------------------------------------------------
def chat_template_seeds():
    fixture = json.loads(read("chat", "chat_templates.json"))
    seeds = {}
    for i, fam in enumerate(fixture["families"]):
        case = fam["cases"][-1]
        parts = [fam["source"].encode(), fam.get("bos", "").encode(), fam.get("eos", "").encode()]
        roles = {"system": b"\0", "user": b"\1", "assistant": b"\2"}
        for m in case["messages"]:
            parts.append(roles.get(m["role"], b"t") + m["content"].encode())
        flags = bytes([(1 if case.get("add_generation_prompt") else 0) | (i % 6) << 1])
        seeds["%s.tmpl" % fam["name"]] = flags + b"\0".join(parts)
    return seeds


# --- data sets ----------------------------------------------------------------------------------
def dataset_seeds():
    messages = "\n".join(json.dumps(r) for r in [
        {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                      {"role": "assistant", "content": "Hello!"}]},
        {"messages": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}], "id": 7},
        {"messages": [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Blue."}]},
    ]).encode() + b"\n"
    alpaca = "\n".join(json.dumps(r) for r in [
        {"instruction": "Add", "input": "2 and 2", "output": "4"},
        {"instruction": "Greet", "input": "", "output": "Hello"},
        {"instruction": "Say no", "output": "No."},
    ]).encode() + b"\n"
    text = read("eval", "heldout_prose.txt")[:2000]
    bad = messages + b'{"messages": [{"role": "user", "content": ""}]}\nnot json\n'
    seeds = {}
    for mode, name, body in ((0, "text", text), (1, "messages", messages), (1, "alpaca", alpaca),
                             (2, "messages", messages), (2, "bad", bad), (3, "messages", messages), (3, "text", text),
                             (3, "bad", bad)):
        seeds["mode%d-%s" % (mode, name)] = bytes([mode]) + body
    return seeds


# --- llm.c checkpoint ---------------------------------------------------------------------------
def llmc_checkpoint(version, T, V, L, NH, C, Vp):
    n = Vp * C + T * C + L * (C + C + 3 * C * C + 3 * C + C * C + C + C + C + 4 * C * C + 4 * C + 4 * C * C + C) + 2 * C
    header = struct.pack("<8i", 20240326, version, T, V, L, NH, C, Vp) + b"\0" * (1024 - 32)
    body = struct.pack("<%df" % n, *[(i % 7) * 0.1 for i in range(n)]) if version == 3 else \
        b"".join(struct.pack("<H", 0x3F80 + (i % 5)) for i in range(n))
    return header + body


def llmc_seeds():
    return {"fp32-1.bin": llmc_checkpoint(3, 1, 1, 1, 1, 1, 1), "fp32-2.bin": llmc_checkpoint(3, 2, 3, 1, 2, 2, 4),
            "bf16-1.bin": llmc_checkpoint(5, 2, 2, 2, 1, 2, 2)}


# --- .wbinspect ---------------------------------------------------------------------------------
def snapshot(L, NH, T, K, lens_rows, attention):
    out = b"WBINSPEC" + struct.pack("<7I", 1, L, NH, T, K, lens_rows, 1 if attention else 0)
    out += struct.pack("<%di" % T, *range(T))
    if attention:
        for _ in range(L * NH):
            for q in range(T):
                out += b"".join(struct.pack("<H", 65535 // (q + 1)) for _ in range(q + 1))
    n = lens_rows * T * K
    out += struct.pack("<%di" % n, *[i % 5 for i in range(n)]) + struct.pack("<%df" % n, *[1.0 / (1 + i % 4) for i in range(n)])
    out += struct.pack("<%df" % T, *[-0.5 * i for i in range(T)])
    pieces = [(i, ("tok%d" % i).encode()) for i in range(5)]
    out += struct.pack("<I", len(pieces)) + b"".join(struct.pack("<iI", i, len(s)) + s for i, s in pieces)
    return out + struct.pack("<I", zlib.crc32(out))


def snapshot_seeds():
    seeds = {}
    for name, args in (("att", (2, 2, 3, 2, 3, True)), ("no-att", (1, 1, 2, 3, 1, False)), ("lens", (2, 1, 2, 1, 3, False))):
        s = snapshot(*args)
        seeds[name + "-raw.wbinspect"] = b"\0" + s
        seeds[name + "-crcfix.wbinspect"] = b"\1" + s
    return seeds


TARGETS = {"fuzz_gguf": gguf_seeds, "fuzz_tokenizer": tokenizer_seeds, "fuzz_safetensors": safetensors_seeds,
           "fuzz_chat_template": chat_template_seeds, "fuzz_datasets": dataset_seeds, "fuzz_llmc": llmc_seeds,
           "fuzz_snapshot": snapshot_seeds}


def main():
    out = sys.argv[1]
    for target, make in TARGETS.items():
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, data in make().items():
            with open(os.path.join(d, "seed-" + name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
