#!/usr/bin/env python3
"""Independent check of a GGUF written by `llm-workbench-cli convert`, with gguf-py (llama.cpp's
Python package) and safetensors/numpy, against the Hugging Face directory it was converted from.

For every tensor llama.cpp's converter would write, it checks the name, the GGUF shape and that the
values (dequantized by gguf-py for q8_0 / q4_0 / f16) equal the HF weights in llama.cpp's layout:
GPT-2 Conv1D weights transposed to (out, in); Llama q/k rows permuted per head with
reshape(heads, 2, HS/2, in).swapaxes(1, 2) (Qwen2 left alone); tied Llama-family heads without
output.weight; GPT-2 always with output.weight (llama.cpp requires it), the tied head a copy of wte.
Tolerances: exact for f32, f16 rounding for f16; q8_0 / q4_0 blocks must be byte-identical to
gguf-py's quantizer. Also checks the architecture's hyper-parameter keys against config.json.

Usage (not part of ctest: needs the reference venv):
    /opt/venvs/llmwb-ref/bin/python tests/tools/check_gguf_export.py HF_DIR FILE.gguf
Prints one line per problem and "OK: N tensors" at the end; exit status 1 on any problem.
"""
import json
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize, quantize
from safetensors.numpy import load_file


def field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        return None
    v = f.parts[f.data[0]]
    if f.types and f.types[0].name == "STRING":
        return bytes(v).decode()
    return v.tolist()[0]


def permute(w, heads):
    # llama.cpp convert_hf_to_gguf.py LlamaModel.permute, reimplemented.
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def main():
    hf_dir, path = sys.argv[1], sys.argv[2]
    cfg = json.load(open(f"{hf_dir}/config.json"))
    st = load_file(f"{hf_dir}/model.safetensors")
    st = {k.removeprefix("transformer."): v.astype(np.float32) for k, v in st.items()}
    r = GGUFReader(path)
    arch = field(r, "general.architecture")
    problems = []
    want = {}
    if arch == "gpt2":
        L = cfg["n_layer"]
        want["token_embd.weight"] = st["wte.weight"]
        want["position_embd.weight"] = st["wpe.weight"]
        for l in range(L):
            h, b = f"h.{l}.", f"blk.{l}."
            want[b + "attn_norm.weight"] = st[h + "ln_1.weight"]
            want[b + "attn_norm.bias"] = st[h + "ln_1.bias"]
            want[b + "attn_qkv.weight"] = st[h + "attn.c_attn.weight"].T
            want[b + "attn_qkv.bias"] = st[h + "attn.c_attn.bias"]
            want[b + "attn_output.weight"] = st[h + "attn.c_proj.weight"].T
            want[b + "attn_output.bias"] = st[h + "attn.c_proj.bias"]
            want[b + "ffn_norm.weight"] = st[h + "ln_2.weight"]
            want[b + "ffn_norm.bias"] = st[h + "ln_2.bias"]
            want[b + "ffn_up.weight"] = st[h + "mlp.c_fc.weight"].T
            want[b + "ffn_up.bias"] = st[h + "mlp.c_fc.bias"]
            want[b + "ffn_down.weight"] = st[h + "mlp.c_proj.weight"].T
            want[b + "ffn_down.bias"] = st[h + "mlp.c_proj.bias"]
        want["output_norm.weight"] = st["ln_f.weight"]
        want["output_norm.bias"] = st["ln_f.bias"]
        tied = cfg.get("tie_word_embeddings", True)
        want["output.weight"] = st["wte.weight"] if tied else st["lm_head.weight"]
        hp = {"context_length": cfg["n_positions"], "embedding_length": cfg["n_embd"], "block_count": L,
              "attention.head_count": cfg["n_head"]}
    else:
        L = cfg["num_hidden_layers"]
        nh, nkv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
        qwen2 = arch == "qwen2"
        perm = (lambda w, n: w) if qwen2 else permute
        want["token_embd.weight"] = st["model.embed_tokens.weight"]
        for l in range(L):
            p, b = f"model.layers.{l}.", f"blk.{l}."
            want[b + "attn_norm.weight"] = st[p + "input_layernorm.weight"]
            want[b + "attn_q.weight"] = perm(st[p + "self_attn.q_proj.weight"], nh)
            want[b + "attn_k.weight"] = perm(st[p + "self_attn.k_proj.weight"], nkv)
            want[b + "attn_v.weight"] = st[p + "self_attn.v_proj.weight"]
            if qwen2:
                for x in "qkv":
                    want[b + f"attn_{x}.bias"] = st[p + f"self_attn.{x}_proj.bias"]
            want[b + "attn_output.weight"] = st[p + "self_attn.o_proj.weight"]
            want[b + "ffn_norm.weight"] = st[p + "post_attention_layernorm.weight"]
            want[b + "ffn_gate.weight"] = st[p + "mlp.gate_proj.weight"]
            want[b + "ffn_up.weight"] = st[p + "mlp.up_proj.weight"]
            want[b + "ffn_down.weight"] = st[p + "mlp.down_proj.weight"]
        want["output_norm.weight"] = st["model.norm.weight"]
        if not cfg.get("tie_word_embeddings", False):
            want["output.weight"] = st["lm_head.weight"]
        hp = {"context_length": cfg["max_position_embeddings"], "embedding_length": cfg["hidden_size"],
              "block_count": L, "feed_forward_length": cfg["intermediate_size"], "attention.head_count": nh,
              "attention.head_count_kv": nkv}
    for k, v in hp.items():
        got = field(r, f"{arch}.{k}")
        if got != v:
            problems.append(f"metadata {arch}.{k} = {got}, config.json says {v}")
    got_names = [t.name for t in r.tensors]
    if set(got_names) != set(want):
        problems.append(f"tensor names differ: extra {sorted(set(got_names) - set(want))}, "
                        f"missing {sorted(set(want) - set(got_names))}")
    for t in r.tensors:
        if t.name not in want:
            continue
        w = want[t.name]
        # gguf-py gives ne reversed as numpy shape after dequantize.
        vals = dequantize(t.data, t.tensor_type).reshape(w.shape).astype(np.float32)
        ne = [int(x) for x in t.shape]
        if ne != list(reversed(w.shape)):
            problems.append(f"{t.name}: ne {ne}, expected {list(reversed(w.shape))}")
        kind = t.tensor_type.name
        if kind == "F32":
            tol = 0.0
        elif kind == "F16":
            tol = float(np.abs(w).max()) * 2 ** -10
        else:
            # Block-quantized: gguf-py's own quantizer (a port of ggml's reference one) must give the
            # same blocks, byte for byte; the value check below is then only a sanity bound
            # (q8_0: a rounding step of amax/127 plus the f16 scale; q4_0: one step of amax/8, as the
            # side opposite the block's extreme clamps at +7).
            ref = quantize(np.ascontiguousarray(w), t.tensor_type)
            got_bytes = np.asarray(t.data).view(np.uint8).ravel()
            ref_bytes = np.asarray(ref).view(np.uint8).ravel()
            if got_bytes.shape != ref_bytes.shape or not np.array_equal(got_bytes, ref_bytes):
                n_bad = int((got_bytes != ref_bytes).sum()) if got_bytes.shape == ref_bytes.shape else -1
                problems.append(f"{t.name} ({kind}): blocks differ from gguf-py's quantizer ({n_bad} bytes)")
            tol = float(np.abs(w).max()) * ((0.5 / 127 + 2 ** -10) if kind == "Q8_0" else 1.01 / 8)
        d = float(np.abs(vals - w).max())
        if d > tol:
            problems.append(f"{t.name} ({kind}): max |diff| {d:.3g} > {tol:.3g}")
    for p in problems:
        print(p)
    print(("FAIL" if problems else "OK") + f": {len(r.tensors)} tensors, arch {arch}, "
          f"types {sorted({t.tensor_type.name for t in r.tensors})}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
