#!/usr/bin/env python3
"""Writes tests/data/inspect/<model>.safetensors: attention probabilities and the logit lens of the
tiny GPT-2, Llama (grouped-query) and Qwen2 (tied head, q/k/v biases) fixtures, from Hugging Face
transformers, as an independent reference for engine/inspect (tests/engine/test_inspect.cpp).

For each model in tests/data/{tiny-gpt2,tiny-llama,tiny-qwen2} (loaded with from_pretrained, run in
float64 with eager attention):

  input_ids   I32 [T]             seeded random ids in [0, vocab), T = 16
  attention   F32 [L, NH, T, T]   model(ids, output_attentions=True).attentions, per query head
  lens        F32 [L+1, T, V]     log-softmax of the lens logits: row l < L is
                                  lm_head(final_norm(hidden_states[l])), hidden_states[0] being the
                                  embedding output; row L is model(ids).logits (HF's last hidden state
                                  already has the final norm applied, so it is not normed twice)

Seeded: a rerun with the same torch/transformers versions reproduces the files. From the repository root:

    python3 -m venv /tmp/venv-inspect && /tmp/venv-inspect/bin/pip install torch transformers safetensors
    /tmp/venv-inspect/bin/python tests/tools/make_inspect_fixture.py
"""
import argparse
import os
import sys

import torch
import transformers
from safetensors.numpy import save_file
from transformers import AutoModelForCausalLM

SEED = 20261203
SEQ = 16
MODELS = ("tiny-gpt2", "tiny-llama", "tiny-qwen2")

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "data"))


def final_norm(model):
    if model.config.model_type == "gpt2":
        return model.transformer.ln_f
    return model.model.norm


def write(name, gen, out_dir):
    model = AutoModelForCausalLM.from_pretrained(os.path.join(DATA, name), attn_implementation="eager")
    model = model.double().eval()
    V = model.config.vocab_size
    ids = torch.randint(0, V, (1, SEQ), generator=gen, dtype=torch.int64)
    with torch.no_grad():
        out = model(ids, output_attentions=True, output_hidden_states=True)
        L = len(out.attentions)
        assert len(out.hidden_states) == L + 1
        rows = [model.lm_head(final_norm(model)(out.hidden_states[l])) for l in range(L)]
        rows.append(out.logits)
        lens = torch.log_softmax(torch.cat(rows, 0), dim=-1)          # [L+1, T, V]
        attention = torch.cat(out.attentions, 0)                      # [L, NH, T, T]
        # The last hidden state already carries the final norm: the head alone gives the logits.
        assert torch.allclose(model.lm_head(out.hidden_states[L]), out.logits)
    meta = {"generator": f"tests/tools/make_inspect_fixture.py (torch {torch.__version__}, "
                         f"transformers {transformers.__version__}, seed {SEED})"}
    path = os.path.join(out_dir, f"{name}.safetensors")
    save_file({"input_ids": ids[0].to(torch.int32).numpy(),
               "attention": attention.to(torch.float32).numpy(),
               "lens": lens.to(torch.float32).numpy()}, path, metadata=meta)
    print(f"{os.path.getsize(path):>9}  {path}  L={L} NH={attention.shape[1]} V={V}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=os.path.join(DATA, "inspect"))
    args = ap.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    os.makedirs(args.out_dir, exist_ok=True)
    for name in MODELS:
        write(name, gen, args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
