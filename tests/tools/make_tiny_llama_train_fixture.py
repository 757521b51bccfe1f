#!/usr/bin/env python3
"""Writes expected_train.safetensors into tests/data/tiny-llama/ and tests/data/tiny-qwen2/: the training
reference for the Llama family (the llm.c test_gpt2 pattern, as tests/tools/make_tiny_gpt2_fixture.py does
for GPT-2).

The models and input ids are the ones make_tiny_llama_fixture.py already wrote (model.safetensors and
expected.safetensors's input_ids); this script does not change them. It loads each model with Hugging Face
`transformers`, checks that PyTorch's float64 logits still equal the stored ones (so the model was read as
written), then stores, computed in float64:

  loss        F32 [1]      mean next-token cross-entropy, logits[:, :-1] vs input_ids[:, 1:] (2*15 tokens)
  grad.<name> F32          d loss / d parameter for every tensor <name> of model.safetensors (HF names;
                           for tiny-qwen2 the embedding gradient includes the tied head's share)
  loss_curve  F32 [10]     loss before each of 10 AdamW steps on that batch:
                           torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0),
                           loss_curve[0] == loss
  loss_smooth F32 [1]      the same loss with label_smoothing = 0.1 (F.cross_entropy's definition)

These exercise RMSNorm, rotary positions, SwiGLU, grouped-query attention, q/k/v biases (qwen2) and tied
and untied heads in the backward pass. To rerun, from the repository root, in a virtualenv outside the
repository (pip install torch transformers safetensors numpy):

    python tests/tools/make_tiny_llama_train_fixture.py

Written with torch 2.15.0 and transformers 5.24.0 (recorded in the file's metadata).
"""
import copy
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import transformers
from safetensors.numpy import load_file, save_file
from transformers import AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "data"))
ADAMW_STEPS = 10
ADAMW = dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0)
SMOOTHING = 0.1


def causal_lm_loss(logits, ids, smoothing=0.0):
    vocab = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1, :].reshape(-1, vocab), ids[:, 1:].reshape(-1), label_smoothing=smoothing)


def write(name):
    out_dir = os.path.join(DATA, name)
    stored = load_file(os.path.join(out_dir, "expected.safetensors"))
    ids = torch.from_numpy(stored["input_ids"].astype(np.int64))
    model = AutoModelForCausalLM.from_pretrained(out_dir, attn_implementation="eager", dtype=torch.float32)
    model64 = copy.deepcopy(model).double().eval()

    model64.zero_grad(set_to_none=True)
    logits = model64(ids).logits
    diff = float(np.max(np.abs(logits.detach().float().numpy() - stored["logits"])))
    if diff > 1e-5:
        raise RuntimeError(f"{name}: logits differ from the stored ones by {diff}")
    loss = causal_lm_loss(logits, ids)
    loss.backward()
    expected = {"loss": np.array([loss.item()], dtype=np.float32)}
    weights = load_file(os.path.join(out_dir, "model.safetensors"))
    params = dict(model64.named_parameters())
    for key in weights:
        p = params[key]
        expected["grad." + key] = p.grad.detach().to(torch.float32).numpy()
    with torch.no_grad():
        expected["loss_smooth"] = np.array([causal_lm_loss(model64(ids).logits, ids, SMOOTHING).item()],
                                           dtype=np.float32)

    train64 = copy.deepcopy(model).double()
    train64.train()  # attention_dropout is 0: train and eval compute the same function
    opt = torch.optim.AdamW(train64.parameters(), foreach=False, **ADAMW)
    curve = []
    for _ in range(ADAMW_STEPS):
        opt.zero_grad(set_to_none=True)
        step_loss = causal_lm_loss(train64(ids).logits, ids)
        curve.append(step_loss.item())
        step_loss.backward()
        opt.step()
    expected["loss_curve"] = np.array(curve, dtype=np.float32)
    meta = {"generator": f"tests/tools/make_tiny_llama_train_fixture.py (torch {torch.__version__}, "
                         f"transformers {transformers.__version__})"}
    path = os.path.join(out_dir, "expected_train.safetensors")
    save_file(expected, path, metadata=meta)
    print(f"{os.path.getsize(path):>9}  {path}  loss {loss.item():.6f}  curve {np.array2string(expected['loss_curve'], precision=4)}")


def main():
    torch.use_deterministic_algorithms(True)
    write("tiny-llama")
    write("tiny-qwen2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
