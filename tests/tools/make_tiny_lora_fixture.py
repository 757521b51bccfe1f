#!/usr/bin/env python3
"""Writes the LoRA reference fixtures tests/data/tiny-gpt2-lora/ and tests/data/tiny-llama-lora/ with
Hugging Face PEFT: adapters on every linear layer of the tiny GPT-2 and tiny Llama fixtures, and what
PEFT computes with them in float64.

Each directory holds:
  adapter_model.safetensors, adapter_config.json
      PeftModel.save_pretrained(): r = 4, lora_alpha = 8 (scale 2), lora_dropout = 0, target_modules
      every linear layer (GPT-2: attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj with fan_in_fan_out;
      Llama: q/k/v/o_proj, gate/up/down_proj). PEFT starts B at zero; here A and B are both re-drawn
      from N(0, 0.1) so every adapter matters and every gradient is non-zero.
  expected.safetensors
      logits      F32 [2,16,512]  of the base model's fixture input_ids with the adapters (float64)
      loss        F32 [1]         mean next-token cross-entropy, logits[:, :-1] vs input_ids[:, 1:]
      grad.<name> F32             d loss / d adapter tensor, <name> as in adapter_model.safetensors
      merged_logits F32 [2,16,512]  after merge_and_unload() (equal to logits up to rounding)

The base models and input ids are tests/data/tiny-gpt2 and tests/data/tiny-llama (not changed here).
From the repository root, in a virtualenv outside the repository (pip install torch transformers
safetensors numpy peft):

    python tests/tools/make_tiny_lora_fixture.py

Written with torch 2.15.0, transformers 5.24.0, peft 0.21.2 (recorded in the files' metadata).
"""
import copy
import os
import sys

import numpy as np
import peft
import torch
import torch.nn.functional as F
import transformers
from peft import LoraConfig, get_peft_model
from safetensors.numpy import load_file, save_file
from transformers import AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "data"))
SEED = 20241203
RANK, ALPHA = 4, 8
ADAPTER_STD = 0.1

TARGETS = {
    "tiny-gpt2": (["attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"], True),
    "tiny-llama": (["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], False),
}


def write(base):
    targets, fan_in_fan_out = TARGETS[base]
    base_dir = os.path.join(DATA, base)
    out_dir = os.path.join(DATA, base + "-lora")
    ids = torch.from_numpy(load_file(os.path.join(base_dir, "expected.safetensors"))["input_ids"].astype(np.int64))
    model = AutoModelForCausalLM.from_pretrained(base_dir, attn_implementation="eager", dtype=torch.float32)
    cfg = LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=targets,
                     fan_in_fan_out=fan_in_fan_out, bias="none", task_type="CAUSAL_LM")
    pm = get_peft_model(model, cfg)
    pm.peft_config["default"].base_model_name_or_path = base  # not this machine's path
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in pm.named_parameters():
            if "lora_" in name:
                p.copy_(ADAPTER_STD * torch.randn(p.shape, generator=gen))
    os.makedirs(out_dir, exist_ok=True)
    pm.save_pretrained(out_dir)

    pm64 = copy.deepcopy(pm).double().eval()
    logits = pm64(ids).logits
    vocab = logits.shape[-1]
    loss = F.cross_entropy(logits[:, :-1, :].reshape(-1, vocab), ids[:, 1:].reshape(-1))
    loss.backward()
    saved = load_file(os.path.join(out_dir, "adapter_model.safetensors"))
    expected = {"logits": logits.detach().float().numpy(), "loss": np.array([loss.item()], dtype=np.float32)}
    for name, p in pm64.named_parameters():
        if "lora_" not in name:
            if p.grad is not None:
                raise RuntimeError(f"{name}: a frozen parameter got a gradient")
            continue
        key = name.replace(".default", "")
        if key not in saved:
            raise RuntimeError(f"{key} not in the saved adapter")
        expected["grad." + key] = p.grad.detach().float().numpy()
    if len(expected) - 2 != len(saved):
        raise RuntimeError("gradient count differs from the saved adapter's tensor count")
    with torch.no_grad():
        merged = copy.deepcopy(pm64).merge_and_unload()
        expected["merged_logits"] = merged(ids).logits.float().numpy()
    meta = {"generator": f"tests/tools/make_tiny_lora_fixture.py (torch {torch.__version__}, transformers "
                         f"{transformers.__version__}, peft {peft.__version__}, seed {SEED})"}
    save_file(expected, os.path.join(out_dir, "expected.safetensors"), metadata=meta)
    readme = os.path.join(out_dir, "README.md")
    with open(readme, "w", encoding="utf-8") as f:
        f.write(f"# {base}-lora reference fixture\n\nWritten by `tests/tools/make_tiny_lora_fixture.py` (see its "
                f"docstring); do not edit by hand. PEFT {peft.__version__} LoRA (r {RANK}, alpha {ALPHA}) on every "
                f"linear layer of `{base}`, adapters drawn from N(0, {ADAPTER_STD}); `expected.safetensors` holds "
                f"PyTorch's float64 logits, loss, adapter gradients and merged logits (torch {torch.__version__}, "
                f"transformers {transformers.__version__}).\n")
    for fn in sorted(os.listdir(out_dir)):
        print(f"{os.path.getsize(os.path.join(out_dir, fn)):>9}  {os.path.join(out_dir, fn)}")
    print(f"loss {loss.item():.6f}")


def main():
    torch.use_deterministic_algorithms(True)
    for base in TARGETS:
        write(base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
