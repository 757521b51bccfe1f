#!/usr/bin/env python3
"""Writes the tiny GPT-2 reference fixture in tests/data/tiny-gpt2/ (the llm.c test_gpt2 pattern).

An independent reference for our transformer engine: Hugging Face `transformers` builds a small
GPT-2, PyTorch runs it in float64, and the results are stored for the C++ tests to compare with.

Files written (all into tests/data/tiny-gpt2/, about 1.2 MB in total):

  config.json, generation_config.json, model.safetensors
      GPT2LMHeadModel.save_pretrained(safe_serialization=True), weights in F32.
      Tensor names carry the "transformer." prefix (transformer.wte.weight, transformer.h.0.attn.c_attn.weight,
      ...). lm_head.weight is tied to transformer.wte.weight and is not stored. Linear layers are HF Conv1D:
      weight shape is [in_features, out_features], y = x @ W + b.
  expected.safetensors
      input_ids   I32 [2,16]      random token ids in [0, 512)
      logits      F32 [2,16,512]  model(input_ids).logits, computed in float64, stored as F32
      loss        F32 [1]         mean next-token cross-entropy with labels = input_ids (HF convention:
                                  logits[:, :-1] predict input_ids[:, 1:], mean over 2*15 tokens), float64
      grad.<name> F32 (shape of <name>)  d loss / d parameter for every tensor <name> in model.safetensors,
                                  float64. grad.transformer.wte.weight includes the tied lm_head's share.
      loss_curve  F32 [10]        loss before each of 10 AdamW steps on that same batch, float64:
                                  torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0),
                                  loss_curve[0] == loss.
  README.md
      What these files are, and the torch/transformers versions that wrote them.

Everything is seeded, so a rerun with the same torch/transformers versions reproduces the files
(bit-for-bit on the same machine; to float64 rounding elsewhere). To rerun, from the repository root:

    /usr/bin/python3 -m venv /opt/venvs/llmwb-ref
    /opt/venvs/llmwb-ref/bin/pip install torch==2.11.0 transformers==4.57.6 safetensors "numpy~=1.26.4"
    /opt/venvs/llmwb-ref/bin/python tests/tools/make_tiny_gpt2_fixture.py

`--out-dir DIR` writes somewhere else; `--check` recomputes everything and compares with the files already
in the output directory instead of writing (exit status 1 on a mismatch).

Note: the loss is computed here with torch.nn.functional.cross_entropy on the float64 logits, not with
HF's `labels=` path, because transformers' ForCausalLMLoss upcasts logits to float32 (i.e. it would
downcast a float64 model). The two are checked to agree to 1e-5.
"""
import argparse
import copy
import os
import sys

import numpy as np
import safetensors
import torch
import torch.nn.functional as F
import transformers
from safetensors.numpy import load_file, save_file
from transformers import GPT2Config, GPT2LMHeadModel

SEED = 20240601
BATCH, SEQ = 2, 16
ADAMW_STEPS = 10
ADAMW = dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0)

# Re-initialisation, so that every parameter matters and nothing is trivially small:
WEIGHT_STD = 0.2  # every matrix (wte, wpe, c_attn, c_proj, c_fc, mlp.c_proj)
BIAS_STD = 0.1  # every linear bias and layernorm bias
LN_GAIN_STD = 0.1  # layernorm gains are 1 + N(0, LN_GAIN_STD)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "data", "tiny-gpt2"))


def make_config():
    return GPT2Config(
        vocab_size=512,
        n_positions=64,
        n_embd=64,
        n_layer=2,
        n_head=4,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        layer_norm_epsilon=1e-5,
    )


def make_model(gen):
    config = make_config()
    config._attn_implementation = "eager"  # plain softmax(QK^T/sqrt(d))V, no fused kernel
    model = GPT2LMHeadModel(config)
    model.eval()
    with torch.no_grad():
        for name, p in model.named_parameters():  # tied lm_head.weight is not listed separately
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.copy_(1.0 + LN_GAIN_STD * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(BIAS_STD * torch.randn(p.shape, generator=gen))
            elif name.endswith(".weight"):
                p.copy_(WEIGHT_STD * torch.randn(p.shape, generator=gen))
            else:
                raise RuntimeError(f"unexpected parameter {name}")
    return model


def causal_lm_loss(logits, ids):
    """Mean next-token cross-entropy, HF convention (shift inside), in the dtype of logits."""
    vocab = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1, :].reshape(-1, vocab), ids[:, 1:].reshape(-1))


def compute(model, ids):
    """Returns (tensors for expected.safetensors as numpy arrays, list of parameter names)."""
    model64 = copy.deepcopy(model).double()
    model64.eval()
    names = [n for n, _ in model64.named_parameters()]

    model64.zero_grad(set_to_none=True)
    out = model64(ids)
    logits = out.logits
    loss = causal_lm_loss(logits, ids)
    loss.backward()

    hf_loss = model64(ids, labels=ids).loss.item()  # HF path (computed in float32 internally)
    if abs(hf_loss - loss.item()) > 1e-5:
        raise RuntimeError(f"loss mismatch: ours {loss.item()} vs transformers {hf_loss}")

    expected = {
        "input_ids": ids.to(torch.int32).numpy(),
        "logits": logits.detach().to(torch.float32).numpy(),
        "loss": np.array([loss.item()], dtype=np.float32),
    }
    for name, p in model64.named_parameters():
        expected["grad." + name] = p.grad.detach().to(torch.float32).numpy()

    # 10 AdamW steps on the same batch, from the same initial weights.
    train64 = copy.deepcopy(model).double()
    train64.train()  # all dropouts are 0, so train/eval give the same function
    opt = torch.optim.AdamW(train64.parameters(), foreach=False, **ADAMW)
    curve = []
    for _ in range(ADAMW_STEPS):
        opt.zero_grad(set_to_none=True)
        step_loss = causal_lm_loss(train64(ids).logits, ids)
        curve.append(step_loss.item())
        step_loss.backward()
        opt.step()
    expected["loss_curve"] = np.array(curve, dtype=np.float32)
    return expected, names


def readme_text(expected, names, model):
    n_params = sum(p.numel() for p in model.parameters())
    lines = [
        "# tiny-gpt2 reference fixture",
        "",
        "Written by `tests/tools/make_tiny_gpt2_fixture.py` (see its docstring to rerun); do not edit by hand.",
        "An independent reference for the engine's GPT-2 forward, loss, backward and AdamW, in the style",
        "of llm.c's test_gpt2: Hugging Face transformers builds the model, PyTorch computes in float64.",
        "",
        f"- torch {torch.__version__}, transformers {transformers.__version__}, "
        f"safetensors {safetensors.__version__}, numpy {np.__version__}",
        f"- seed {SEED}; {n_params} parameters",
        "",
        "## Model (`config.json`, `generation_config.json`, `model.safetensors`)",
        "",
        "`GPT2LMHeadModel(GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=4,",
        "activation_function=\"gelu_new\", resid_pdrop=0, embd_pdrop=0, attn_pdrop=0, layer_norm_epsilon=1e-5))`,",
        "saved with `save_pretrained(safe_serialization=True)`, F32. MLP width 4*n_embd = 256; gelu_new is the",
        "tanh approximation. Attention scales by 1/sqrt(head_dim) = 1/4.",
        "",
        f"Weights are re-initialised: matrices N(0, {WEIGHT_STD}), biases N(0, {BIAS_STD}), layernorm gains",
        f"1 + N(0, {LN_GAIN_STD}), so no parameter is trivially zero or one.",
        "",
        "- Names have the `transformer.` prefix (the hub's `gpt2` checkpoint has none).",
        "- `lm_head.weight` is tied to `transformer.wte.weight` and is not stored.",
        "- Linear layers are HF `Conv1D`: weight is `[in, out]`, `y = x @ W + b`; `c_attn` packs q, k, v",
        "  along the output axis (columns 0..63 q, 64..127 k, 128..191 v; heads of 16 within each).",
        "- `bos_token_id`/`eos_token_id` in config.json are GPT2Config's defaults (50256), outside this",
        "  512-token vocabulary; nothing here uses them.",
        "",
        "## Expected values (`expected.safetensors`)",
        "",
        "| name | dtype | shape | what |",
        "| --- | --- | --- | --- |",
    ]
    what = {
        "input_ids": "random ids in [0, 512)",
        "logits": "`model(input_ids).logits`, float64 compute, stored F32",
        "loss": "mean next-token cross-entropy, `logits[:, :-1]` vs `input_ids[:, 1:]` (30 tokens), float64",
        "loss_curve": f"loss before each of {ADAMW_STEPS} AdamW steps on this batch (float64); `loss_curve[0] == loss`",
    }
    for key in ["input_ids", "logits", "loss", "loss_curve"]:
        a = expected[key]
        lines.append(f"| `{key}` | {'I32' if a.dtype == np.int32 else 'F32'} | {list(a.shape)} | {what[key]} |")
    lines.append("| `grad.<name>` | F32 | as `<name>` | d loss / d `<name>` for each tensor of model.safetensors, "
                 "float64; the wte gradient includes the tied lm_head's share |")
    lines += [
        "",
        f"Values: loss = {expected['loss'][0]:.6f}; loss_curve = "
        + ", ".join(f"{v:.6f}" for v in expected["loss_curve"]) + ".",
        "",
        "AdamW is `torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0)`, i.e. for step",
        "t = 1, 2, ...: `m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;",
        "p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`, with m = v = 0 at the start, no gradient",
        "clipping, and the tied wte/lm_head weight updated once with its combined gradient.",
        "",
        "Gradients that are zero by construction: the key part of each `c_attn.bias` (columns 64..127; softmax",
        "is shift-invariant, so they are ~1e-19 rounding noise) and rows 16..63 of `wpe` (positions not in the batch).",
        "",
        "Gradient tensors: " + ", ".join(f"`grad.{n}`" for n in names) + ".",
        "",
    ]
    return "\n".join(lines)


def compare(out_dir, expected, model):
    ok = True
    have = load_file(os.path.join(out_dir, "expected.safetensors"))
    if sorted(have) != sorted(expected):
        print("expected.safetensors: tensor names differ")
        ok = False
    for k in sorted(set(have) & set(expected)):
        a, b = have[k], expected[k]
        if a.shape != b.shape or a.dtype != b.dtype:
            print(f"{k}: shape/dtype {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}")
            ok = False
            continue
        diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
        scale = max(1.0, float(np.max(np.abs(b.astype(np.float64)))))
        if diff > 1e-5 * scale:
            print(f"{k}: max abs diff {diff:g}")
            ok = False
    weights = load_file(os.path.join(out_dir, "model.safetensors"))
    for name, p in model.state_dict().items():
        if name == "lm_head.weight":
            continue
        if name not in weights or not np.array_equal(weights[name], p.numpy()):
            print(f"model.safetensors: {name} differs")
            ok = False
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    ap.add_argument("--check", action="store_true", help="compare with the existing files, write nothing")
    args = ap.parse_args()

    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(SEED)
    torch.manual_seed(SEED)
    model = make_model(gen)
    ids = torch.randint(0, model.config.vocab_size, (BATCH, SEQ), generator=gen, dtype=torch.int64)
    expected, names = compute(model, ids)

    if args.check:
        ok = compare(args.out_dir, expected, model)
        print("fixture matches" if ok else "fixture MISMATCH")
        return 0 if ok else 1

    os.makedirs(args.out_dir, exist_ok=True)
    model.save_pretrained(args.out_dir, safe_serialization=True)
    # One metadata key only: safetensors writes the metadata map in hash order, so several keys would make
    # the file's bytes differ from run to run.
    meta = {
        "generator": f"tests/tools/make_tiny_gpt2_fixture.py (torch {torch.__version__}, "
        f"transformers {transformers.__version__}, seed {SEED})",
    }
    save_file(expected, os.path.join(args.out_dir, "expected.safetensors"), metadata=meta)
    with open(os.path.join(args.out_dir, "README.md"), "w", encoding="utf-8") as f:
        f.write(readme_text(expected, names, model))

    # The saved model must reload to the same function (tied lm_head restored from wte).
    reloaded = GPT2LMHeadModel.from_pretrained(args.out_dir, attn_implementation="eager").double().eval()
    with torch.no_grad():
        diff = (reloaded(ids).logits.float().numpy() - expected["logits"]).__abs__().max()
    if diff > 1e-5:
        raise RuntimeError(f"reloaded model disagrees with stored logits by {diff}")

    for fn in sorted(os.listdir(args.out_dir)):
        print(f"{os.path.getsize(os.path.join(args.out_dir, fn)):>9}  {os.path.join(args.out_dir, fn)}")
    print(f"loss {expected['loss'][0]:.6f}; loss_curve {np.array2string(expected['loss_curve'], precision=4)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
