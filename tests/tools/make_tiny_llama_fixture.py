#!/usr/bin/env python3
"""Writes the tiny Llama and Qwen2 reference fixtures in tests/data/tiny-llama/ and tests/data/tiny-qwen2/.

An independent reference for the engine's Llama-family forward pass (RMSNorm, rotary positions in
Hugging Face's rotate-half layout, SwiGLU, grouped-query attention, tied/untied head, q/k/v biases):
Hugging Face `transformers` builds each model, PyTorch runs it in float64, and the logits are stored.

Files written per directory (each well under 1.5 MB):

  config.json, generation_config.json, model.safetensors
      <Model>ForCausalLM.save_pretrained(safe_serialization=True), weights in F32, HF names
      (model.embed_tokens.weight, model.layers.{l}.self_attn.q_proj.weight, ...). Linear weights are
      nn.Linear: [out_features, in_features]. tiny-llama has an untied lm_head.weight; tiny-qwen2 ties
      it to the embedding (not stored) and has q/k/v biases.
  expected.safetensors
      input_ids  I32 [2,16]      random token ids in [0, 512)
      logits     F32 [2,16,512]  model(input_ids).logits, computed in float64, stored as F32
  README.md
      What these files are, and the torch/transformers versions that wrote them.

Models: vocab 512, hidden 64, intermediate 160, 2 layers, 4 query heads, 2 key/value heads (GQA),
context 64, rms_norm_eps 1e-5, rope_theta 10000 (tiny-qwen2: 1e6, to exercise the config field).
Weights are re-initialised: matrices N(0, 0.2), biases N(0, 0.1), RMSNorm gains 1 + N(0, 0.1).

Seeded: a rerun with the same torch/transformers versions reproduces the files. From the repository root:

    /opt/venvs/llmwb-ref/bin/python tests/tools/make_tiny_llama_fixture.py
"""
import argparse
import copy
import os
import sys

import torch
import transformers
from safetensors.numpy import save_file
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

SEED = 20240715
BATCH, SEQ = 2, 16
WEIGHT_STD = 0.2
BIAS_STD = 0.1
NORM_GAIN_STD = 0.1

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "data"))

COMMON = dict(vocab_size=512, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
              rms_norm_eps=1e-5, attention_dropout=0.0)


def make_llama():
    return LlamaForCausalLM(LlamaConfig(rope_theta=10000.0, tie_word_embeddings=False,
                                        attention_bias=False, mlp_bias=False, **COMMON))


def make_qwen2():
    # Qwen2 always has q/k/v biases (and none on o_proj).
    return Qwen2ForCausalLM(Qwen2Config(rope_theta=1000000.0, tie_word_embeddings=True,
                                        use_sliding_window=False, **COMMON))


def reinit(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():  # a tied lm_head is not listed separately
            if name.endswith("norm.weight"):
                p.copy_(1.0 + NORM_GAIN_STD * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(BIAS_STD * torch.randn(p.shape, generator=gen))
            elif name.endswith(".weight"):
                p.copy_(WEIGHT_STD * torch.randn(p.shape, generator=gen))
            else:
                raise RuntimeError(f"unexpected parameter {name}")


def readme_text(name, model):
    cfg = model.config
    n_params = sum(p.numel() for p in model.parameters())
    return "\n".join([
        f"# {name} reference fixture",
        "",
        "Written by `tests/tools/make_tiny_llama_fixture.py` (see its docstring to rerun); do not edit by hand.",
        "An independent reference for the engine's Llama-family forward pass: Hugging Face transformers",
        "builds the model, PyTorch computes the logits in float64.",
        "",
        f"- torch {torch.__version__}, transformers {transformers.__version__}; seed {SEED}; {n_params} parameters",
        f"- `{type(model).__name__}`: vocab {cfg.vocab_size}, hidden {cfg.hidden_size}, intermediate "
        f"{cfg.intermediate_size}, {cfg.num_hidden_layers} layers, {cfg.num_attention_heads} query heads over "
        f"{cfg.num_key_value_heads} key/value heads, context {cfg.max_position_embeddings}, rms_norm_eps "
        f"{cfg.rms_norm_eps}, rope_theta {cfg.rope_theta}, tie_word_embeddings {cfg.tie_word_embeddings}",
        f"- weights re-initialised: matrices N(0, {WEIGHT_STD}), biases N(0, {BIAS_STD}), RMSNorm gains "
        f"1 + N(0, {NORM_GAIN_STD})",
        "- `model.safetensors`: HF names, nn.Linear weights `[out, in]`, q/k rows in HF's rotate-half rotary layout",
        "- `expected.safetensors`: `input_ids` I32 [2,16]; `logits` F32 [2,16,512] (float64 compute)",
        "",
    ])


def write(name, factory, gen):
    model = factory()
    model.config._attn_implementation = "eager"
    model.eval()
    reinit(model, gen)
    ids = torch.randint(0, model.config.vocab_size, (BATCH, SEQ), generator=gen, dtype=torch.int64)
    model64 = copy.deepcopy(model).double().eval()
    with torch.no_grad():
        logits = model64(ids).logits
    out_dir = os.path.join(DATA, name)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    meta = {"generator": f"tests/tools/make_tiny_llama_fixture.py (torch {torch.__version__}, "
                         f"transformers {transformers.__version__}, seed {SEED})"}
    save_file({"input_ids": ids.to(torch.int32).numpy(), "logits": logits.to(torch.float32).numpy()},
              os.path.join(out_dir, "expected.safetensors"), metadata=meta)
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8") as f:
        f.write(readme_text(name, model))
    for fn in sorted(os.listdir(out_dir)):
        print(f"{os.path.getsize(os.path.join(out_dir, fn)):>9}  {os.path.join(out_dir, fn)}")


def main():
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    write("tiny-llama", make_llama, gen)
    write("tiny-qwen2", make_qwen2, gen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
