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
    prefs = "\n".join(json.dumps(r) for r in [
        {"prompt": "What is 2+2?", "chosen": "4.", "rejected": "5."},
        {"prompt": [{"role": "user", "content": "Say hi"}], "chosen": "Hi!", "rejected": "No."},
        {"prompt": "Name a colour.", "chosen": "Blue, the colour of the sky.", "rejected": "Dog."},
    ]).encode() + b"\n"
    seeds = {}
    for mode, name, body in ((0, "text", text), (1, "messages", messages), (1, "alpaca", alpaca),
                             (2, "messages", messages), (2, "bad", bad), (3, "messages", messages), (3, "text", text),
                             (3, "bad", bad), (4, "prefs", prefs), (67, "prefs-short", prefs)):
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


# --- HTTP requests (the API server) -------------------------------------------------------------
# Bodies as tests/app/test_api_server.cpp and tests/api/ send them.
API_BODIES = [
    {"model": "tiny", "prompt": "abc def", "max_tokens": 12, "temperature": 0},
    {"model": "tiny", "prompt": "abc def", "max_tokens": 12, "temperature": 0, "stream": True},
    {"messages": [{"role": "system", "content": "be brief"},
                  {"role": "user", "content": [{"type": "text", "text": "hi there"}]}],
     "max_tokens": 10, "temperature": 0, "n": 3, "logprobs": True, "top_logprobs": 2},
    {"model": "starter", "messages": [{"role": "user", "content": "What is 23 + 45?"}], "temperature": 1.0,
     "max_tokens": 40, "n": 3, "seed": 7, "stop": ["Tens", "\n\n"], "stream": True},
    {"prompt": [1, 2, 3], "logprobs": 2, "logit_bias": {"5": -100, "7": 3.5}, "frequency_penalty": 0.5,
     "presence_penalty": -0.5, "top_p": 0.9, "ignore_eos": True},
    {"messages": [{"role": "developer", "content": "x"}, {"role": "assistant", "content": "y"}],
     "max_completion_tokens": 4, "stop": "\n"},
]


def http_request(method, path, headers=(), body=b"", version=b"HTTP/1.1"):
    head = method + b" " + path + b" " + version + b"\r\n"
    head += b"".join(k + b": " + v + b"\r\n" for k, v in headers)
    return head + b"\r\n" + body


def http_request_seeds():
    auth = (b"Authorization", b"Bearer sk-1")
    host = (b"Host", b"127.0.0.1:8080")
    requests = {
        "health": http_request(b"GET", b"/health", [host]),
        "health-1.0": http_request(b"GET", b"/health?x=1", [], version=b"HTTP/1.0"),
        "models": http_request(b"GET", b"/v1/models", [host, auth, (b"Accept", b"*/*")]),
        "bare-lf": b"GET /v1/models HTTP/1.1\nHost: localhost\n\r\n\r\n",
        "chunked": http_request(b"POST", b"/v1/completions", [host, (b"Transfer-Encoding", b"chunked")],
                                b"5\r\nhello\r\n0\r\n\r\n"),
        "two-lengths": http_request(b"POST", b"/v1/completions", [(b"Content-Length", b"2"), (b"Content-Length", b"3")],
                                    b"{}x"),
        "large-head": http_request(b"GET", b"/health", [host, (b"X-Pad", b"a" * 33000)]),
        "slowloris": b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"pro",
    }
    for i, body in enumerate(API_BODIES):
        b = json.dumps(body).encode()
        path = b"/v1/chat/completions" if "messages" in body else b"/v1/completions"
        requests["post-%d" % i] = http_request(b"POST", path, [host, auth, (b"Content-Type", b"application/json"),
                                                               (b"Content-Length", str(len(b)).encode())], b)
    requests["pipelined"] = requests["post-0"] + requests["health"]
    # Two bytes seed where the target cuts the bytes into pieces.
    return {name + ".http": bytes([i, 255 - i]) + r for i, (name, r) in enumerate(requests.items())}


# --- whole models (load_model) ------------------------------------------------------------------
# Tiny models written here from their formats' tensor names (engine/src/io/hf_gpt2.cpp, hf_llama.cpp,
# gguf_model.cpp): a few KiB each, so that load_model and a forward pass run per input.
def f32_bytes(n, scale=0.05):
    return struct.pack("<%df" % n, *[scale * ((i * 7919) % 13 - 6) for i in range(n)])


def safetensors_file(tensors):
    """tensors: [(name, shape)], all F32 with deterministic values."""
    header, data = {}, b""
    for name, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [len(data), len(data) + 4 * n]}
        data += f32_bytes(n)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def hf_gpt2(C=8, L=1, V=16, T=8, NH=2):
    config = {"model_type": "gpt2", "n_embd": C, "n_head": NH, "n_layer": L, "n_positions": T, "vocab_size": V,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    t = [("wte.weight", (V, C)), ("wpe.weight", (T, C))]
    for l in range(L):
        h = "h.%d." % l
        t += [(h + "ln_1.weight", (C,)), (h + "ln_1.bias", (C,)), (h + "attn.c_attn.weight", (C, 3 * C)),
              (h + "attn.c_attn.bias", (3 * C,)), (h + "attn.c_proj.weight", (C, C)), (h + "attn.c_proj.bias", (C,)),
              (h + "ln_2.weight", (C,)), (h + "ln_2.bias", (C,)), (h + "mlp.c_fc.weight", (C, 4 * C)),
              (h + "mlp.c_fc.bias", (4 * C,)), (h + "mlp.c_proj.weight", (4 * C, C)), (h + "mlp.c_proj.bias", (C,))]
    t += [("ln_f.weight", (C,)), ("ln_f.bias", (C,))]
    return config, safetensors_file(t)


def hf_llama(model_type="llama", C=8, L=1, V=16, T=8, NH=2, KVH=1, F=16, tied=True):
    config = {"model_type": model_type, "hidden_size": C, "intermediate_size": F, "num_attention_heads": NH,
              "num_key_value_heads": KVH, "num_hidden_layers": L, "max_position_embeddings": T, "vocab_size": V,
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": tied, "hidden_act": "silu"}
    KVW = C // NH * KVH
    t = [("model.embed_tokens.weight", (V, C))]
    for l in range(L):
        p = "model.layers.%d." % l
        t += [(p + "input_layernorm.weight", (C,)), (p + "self_attn.q_proj.weight", (C, C)),
              (p + "self_attn.k_proj.weight", (KVW, C)), (p + "self_attn.v_proj.weight", (KVW, C))]
        if model_type == "qwen2":
            t += [(p + "self_attn.q_proj.bias", (C,)), (p + "self_attn.k_proj.bias", (KVW,)),
                  (p + "self_attn.v_proj.bias", (KVW,))]
        t += [(p + "self_attn.o_proj.weight", (C, C)), (p + "post_attention_layernorm.weight", (C,)),
              (p + "mlp.gate_proj.weight", (F, C)), (p + "mlp.up_proj.weight", (F, C)),
              (p + "mlp.down_proj.weight", (C, F))]
    t += [("model.norm.weight", (C,))]
    if not tied:
        t += [("lm_head.weight", (V, C))]
    return config, safetensors_file(t)


def q8_0_bytes(n):
    """n values (a multiple of 32) as q8_0 blocks: f16 scale, 32 int8."""
    out = b""
    for b in range(n // 32):
        out += struct.pack("<e", 0.01) + bytes(((i * 37 + b) % 200 + 28) % 256 for i in range(32))
    return out


def gguf_model(arch, C=32, L=1, V=8, T=4, NH=2, F=32, q8=False):
    u32 = lambda v: struct.pack("<I", v)
    f32 = lambda v: struct.pack("<f", v)
    a = arch.encode() + b"."
    kvs = [(b"general.architecture", 8, gguf_string(arch.encode())), (a + b"block_count", 4, u32(L)),
           (a + b"embedding_length", 4, u32(C)), (a + b"feed_forward_length", 4, u32(F)),
           (a + b"attention.head_count", 4, u32(NH)), (a + b"context_length", 4, u32(T))]
    if arch == "gpt2":
        kvs.append((a + b"attention.layer_norm_epsilon", 6, f32(1e-5)))
    else:
        kvs += [(a + b"attention.head_count_kv", 4, u32(1)), (a + b"attention.layer_norm_rms_epsilon", 6, f32(1e-5)),
                (a + b"rope.freq_base", 6, f32(10000.0))]
    KVW = C // NH
    # (name, GGUF shape: row length first); linear weights may be q8_0.
    linear = [("token_embd.weight", (C, V))]
    small = []
    if arch == "gpt2":
        small.append(("position_embd.weight", (C, T)))
    for l in range(L):
        b = "blk.%d." % l
        if arch == "gpt2":
            small += [(b + "attn_norm.weight", (C,)), (b + "attn_norm.bias", (C,)), (b + "attn_qkv.bias", (3 * C,)),
                      (b + "attn_output.bias", (C,)), (b + "ffn_norm.weight", (C,)), (b + "ffn_norm.bias", (C,)),
                      (b + "ffn_up.bias", (F,)), (b + "ffn_down.bias", (C,))]
            linear += [(b + "attn_qkv.weight", (C, 3 * C)), (b + "attn_output.weight", (C, C)),
                       (b + "ffn_up.weight", (C, F)), (b + "ffn_down.weight", (F, C))]
        else:
            small += [(b + "attn_norm.weight", (C,)), (b + "ffn_norm.weight", (C,))]
            linear += [(b + "attn_q.weight", (C, C)), (b + "attn_k.weight", (C, KVW)), (b + "attn_v.weight", (C, KVW)),
                       (b + "attn_output.weight", (C, C)), (b + "ffn_gate.weight", (C, F)), (b + "ffn_up.weight", (C, F)),
                       (b + "ffn_down.weight", (F, C))]
    small.append(("output_norm.weight", (C,)))
    if arch == "gpt2":
        small.append(("output_norm.bias", (C,)))
    tensors = []
    for name, shape in small + linear:
        n = 1
        for d in shape:
            n *= d
        quantized = q8 and (name, shape) in linear and shape[0] % 32 == 0
        tensors.append((name.encode(), 8 if quantized else 0, shape, q8_0_bytes(n) if quantized else f32_bytes(n)))
    return gguf_file(kvs, tensors)


def model_load_seeds():
    seeds = {}
    for name, (config, weights) in (("gpt2", hf_gpt2()), ("gpt2-2layers", hf_gpt2(L=2, T=4)), ("llama", hf_llama()),
                                    ("llama-untied", hf_llama(tied=False)), ("qwen2", hf_llama("qwen2"))):
        seeds["hf-" + name] = b"\0" + json.dumps(config).encode() + b"\0" + weights
    for name, blob in (("gpt2", gguf_model("gpt2", C=8, V=16, F=16)), ("llama", gguf_model("llama", C=8, V=16, F=16)),
                       ("gpt2-q8_0", gguf_model("gpt2", q8=True)), ("llama-q8_0", gguf_model("llama", q8=True))):
        seeds["gguf-" + name] = b"\1" + blob
    seeds["llmc"] = b"\2" + llmc_checkpoint(3, 2, 3, 1, 2, 2, 4)
    return seeds


def openai_request_seeds():
    seeds = {}
    for i, body in enumerate(API_BODIES):
        chat = "messages" in body
        seeds["body-%d.json" % i] = bytes([1 if chat else 0]) + json.dumps(body).encode()
    seeds["not-json"] = b"\0{not json"
    seeds["bad-role"] = b"\1" + json.dumps({"messages": [{"role": "robot", "content": "x"}]}).encode()
    seeds["long-prompt"] = b"\0" + json.dumps({"prompt": "q" * 400}).encode()
    return seeds


TARGETS = {"fuzz_gguf": gguf_seeds, "fuzz_tokenizer": tokenizer_seeds, "fuzz_safetensors": safetensors_seeds,
           "fuzz_chat_template": chat_template_seeds, "fuzz_datasets": dataset_seeds, "fuzz_llmc": llmc_seeds,
           "fuzz_snapshot": snapshot_seeds, "fuzz_http_request": http_request_seeds,
           "fuzz_model_load": model_load_seeds, "fuzz_openai_request": openai_request_seeds}


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
