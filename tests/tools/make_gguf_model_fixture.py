#!/usr/bin/env python3
"""Writes GGUF model fixtures into tests/data/gguf/ from the HF safetensors fixtures.

An independent writer (gguf-py's GGUFWriter and gguf.quants.quantize, the llama.cpp project's Python
package) converts tests/data/tiny-gpt2, tiny-llama and tiny-qwen2 following llama.cpp's conventions:
GGUF tensor names (token_embd, blk.N.attn_qkv, ...), linear weights stored with numpy shape
(out, in) = GGUF ne [in, out] (GPT-2's Conv1D weights are transposed for that), Llama q/k rows
permuted into the interleaved rotary layout (per head: reshape(heads, 2, HS/2, in).swapaxes(1, 2)),
Qwen2 q/k left in rotate-half order (NEOX rope), no output.weight for tied heads.

Files (tensors: 2-D weights f32 or q8_0; in the q8_0 files attn_norm is f16 and ffn_norm bf16):
  tiny-gpt2-f32.gguf, tiny-llama-f32.gguf, tiny-qwen2-q8_0.gguf (total kept under 1.5 MB)
Tokenizers: gpt2 and qwen2 files carry a "gpt2" (byte-level BPE) vocabulary: tests/data/tokenizer/
tiny_qwen2.json cut to the first 512 ids (merges whose parts or result fall outside dropped), pre
"qwen2"; tokens.json records a sample text and its ids from HF `tokenizers` on that cut vocabulary.
The llama files carry a "llama" (SPM) vocabulary: tiny_spm_vocab.json cut to 512 tokens.

To rerun, from the repository root (deterministic):

    /opt/venvs/llmwb-ref/bin/python tests/tools/make_gguf_model_fixture.py
"""
import json
import os

import numpy as np
import gguf
from safetensors.numpy import load_file
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
OUT = os.path.join(DATA, "gguf")
V = 512
SAMPLE = "Hello world! It's 2024, don't panic: xxxx   yy\nz\u00e9\u00e8 \u4e16\u754c"


def bpe_vocab():
    d = json.load(open(os.path.join(DATA, "tokenizer", "tiny_qwen2.json")))
    inv = {i: t for t, i in d["model"]["vocab"].items()}
    tokens = [inv[i] for i in range(V)]
    keep = set(tokens)
    merges = []
    for m in d["model"]["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ")
        if a in keep and b in keep and a + b in keep:
            merges.append(a + " " + b)
    types = [1] * V
    added = [a for a in d["added_tokens"] if a["id"] < V]
    for a in added:
        types[a["id"]] = 3 if a["special"] else 4
    d["model"]["vocab"] = {t: i for i, t in enumerate(tokens)}
    d["model"]["merges"] = [m.split(" ") for m in merges]
    d["added_tokens"] = added
    ref = Tokenizer.from_str(json.dumps(d))
    ids = ref.encode(SAMPLE, add_special_tokens=False).ids
    return tokens, merges, types, ids


def spm_vocab():
    d = json.load(open(os.path.join(DATA, "tokenizer", "tiny_spm_vocab.json")))
    return d["tokens"][:V], [float(s) for s in d["scores"][:V]], d["token_types"][:V], d


def add_tensor(w, name, arr, qtype):
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if qtype == gguf.GGMLQuantizationType.F32:
        w.add_tensor(name, arr)
    else:
        w.add_tensor(name, gguf.quants.quantize(arr, qtype), raw_dtype=qtype)


def permute(wt, heads):
    # llama.cpp's Llama q/k permutation: rotate-half rows -> interleaved pairs.
    rows = wt.shape[0]
    hs = rows // heads
    return wt.reshape(heads, 2, hs // 2, *wt.shape[1:]).swapaxes(1, 2).reshape(wt.shape)


def write(path, arch, cfg, tensors, quant, tok):
    Q = gguf.GGMLQuantizationType
    w = gguf.GGUFWriter(path, arch=arch)
    w.add_name(os.path.basename(path))
    w.add_block_count(cfg["layers"])
    w.add_context_length(cfg["ctx"])
    w.add_embedding_length(cfg["embd"])
    w.add_feed_forward_length(cfg["ffn"])
    w.add_head_count(cfg["heads"])
    w.add_head_count_kv(cfg["kv_heads"])
    if arch == "gpt2":
        w.add_layer_norm_eps(cfg["eps"])
    else:
        w.add_layer_norm_rms_eps(cfg["eps"])
        w.add_rope_freq_base(cfg["theta"])
        w.add_rope_dimension_count(cfg["embd"] // cfg["heads"])
    w.add_file_type(7 if quant else 0)
    if tok[0] == "gpt2":
        _, tokens, merges, types = tok
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("qwen2")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(0)
        w.add_eos_token_id(1)
    else:
        _, tokens, scores, types, d = tok
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(d["bos"])
        w.add_eos_token_id(d["eos"])
        w.add_unk_token_id(d["unk"])
        w.add_add_space_prefix(bool(d["add_space_prefix"]))
    for name, arr in tensors:
        if arr.ndim == 1:
            qt = Q.F32
            if quant and name.endswith("attn_norm.weight"):
                qt = Q.F16
            elif quant and name.endswith("ffn_norm.weight"):
                qt = Q.BF16
        else:
            qt = Q.Q8_0 if quant else Q.F32
        add_tensor(w, name, arr, qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gpt2_tensors():
    st = load_file(os.path.join(DATA, "tiny-gpt2", "model.safetensors"))
    g = lambda n: st.get(n, st.get("transformer." + n))
    cfg = json.load(open(os.path.join(DATA, "tiny-gpt2", "config.json")))
    L = cfg["n_layer"]
    t = [("token_embd.weight", g("wte.weight")), ("position_embd.weight", g("wpe.weight"))]
    for l in range(L):
        h, b = f"h.{l}.", f"blk.{l}."
        t += [(b + "attn_norm.weight", g(h + "ln_1.weight")), (b + "attn_norm.bias", g(h + "ln_1.bias")),
              (b + "attn_qkv.weight", g(h + "attn.c_attn.weight").T), (b + "attn_qkv.bias", g(h + "attn.c_attn.bias")),
              (b + "attn_output.weight", g(h + "attn.c_proj.weight").T), (b + "attn_output.bias", g(h + "attn.c_proj.bias")),
              (b + "ffn_norm.weight", g(h + "ln_2.weight")), (b + "ffn_norm.bias", g(h + "ln_2.bias")),
              (b + "ffn_up.weight", g(h + "mlp.c_fc.weight").T), (b + "ffn_up.bias", g(h + "mlp.c_fc.bias")),
              (b + "ffn_down.weight", g(h + "mlp.c_proj.weight").T), (b + "ffn_down.bias", g(h + "mlp.c_proj.bias"))]
    # (llama.cpp also writes output.weight = token_embd for GPT-2; left out here to keep the fixture small.)
    t += [("output_norm.weight", g("ln_f.weight")), ("output_norm.bias", g("ln_f.bias"))]
    c = dict(layers=L, ctx=cfg["n_positions"], embd=cfg["n_embd"], ffn=cfg.get("n_inner") or 4 * cfg["n_embd"],
             heads=cfg["n_head"], kv_heads=cfg["n_head"], eps=cfg["layer_norm_epsilon"])
    return c, t


def llama_tensors(name, permute_qk):
    st = load_file(os.path.join(DATA, name, "model.safetensors"))
    cfg = json.load(open(os.path.join(DATA, name, "config.json")))
    L, NH = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    KVH = cfg.get("num_key_value_heads", NH)
    perm = (lambda x, n: permute(x, n)) if permute_qk else (lambda x, n: x)
    t = [("token_embd.weight", st["model.embed_tokens.weight"])]
    for l in range(L):
        p, b = f"model.layers.{l}.", f"blk.{l}."
        t += [(b + "attn_norm.weight", st[p + "input_layernorm.weight"]),
              (b + "attn_q.weight", perm(st[p + "self_attn.q_proj.weight"], NH)),
              (b + "attn_k.weight", perm(st[p + "self_attn.k_proj.weight"], KVH)),
              (b + "attn_v.weight", st[p + "self_attn.v_proj.weight"])]
        if p + "self_attn.q_proj.bias" in st:
            t += [(b + "attn_q.bias", perm(st[p + "self_attn.q_proj.bias"], NH)),
                  (b + "attn_k.bias", perm(st[p + "self_attn.k_proj.bias"], KVH)),
                  (b + "attn_v.bias", st[p + "self_attn.v_proj.bias"])]
        t += [(b + "attn_output.weight", st[p + "self_attn.o_proj.weight"]),
              (b + "ffn_norm.weight", st[p + "post_attention_layernorm.weight"]),
              (b + "ffn_gate.weight", st[p + "mlp.gate_proj.weight"]),
              (b + "ffn_up.weight", st[p + "mlp.up_proj.weight"]),
              (b + "ffn_down.weight", st[p + "mlp.down_proj.weight"])]
    t.append(("output_norm.weight", st["model.norm.weight"]))
    if not cfg.get("tie_word_embeddings", False):
        t.append(("output.weight", st["lm_head.weight"]))
    c = dict(layers=L, ctx=cfg["max_position_embeddings"], embd=cfg["hidden_size"], ffn=cfg["intermediate_size"],
             heads=NH, kv_heads=KVH, eps=cfg["rms_norm_eps"], theta=cfg.get("rope_theta", 10000.0))
    return c, t


def main():
    os.makedirs(OUT, exist_ok=True)
    tokens, merges, types, ids = bpe_vocab()
    bpe = ("gpt2", tokens, merges, types)
    s_tokens, s_scores, s_types, s_d = spm_vocab()
    spm = ("llama", s_tokens, s_scores, s_types, s_d)
    c, t = gpt2_tensors()
    write(os.path.join(OUT, "tiny-gpt2-f32.gguf"), "gpt2", c, t, False, bpe)
    c, t = llama_tensors("tiny-llama", True)
    write(os.path.join(OUT, "tiny-llama-f32.gguf"), "llama", c, t, False, spm)
    c, t = llama_tensors("tiny-qwen2", False)
    write(os.path.join(OUT, "tiny-qwen2-q8_0.gguf"), "qwen2", c, t, True, bpe)
    with open(os.path.join(OUT, "tokens.json"), "w") as f:
        json.dump({"sample": SAMPLE, "bpe_ids": ids}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
