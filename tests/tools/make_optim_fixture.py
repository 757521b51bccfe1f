#!/usr/bin/env python3
"""Writes tests/data/train/optim_fixture.json: reference values for the engine's AdamW and LR schedules.

An independent implementation's numbers for tests/engine/test_adamw.cpp and test_lr_schedule.cpp:

  adamw      trajectories of torch.optim.AdamW (foreach=False, float32) on two tensors -- a (3, 4)
             matrix in a group with weight decay and a (4,) bias in a group without -- over several steps
             with a different learning rate each step and given gradients: initial values, the gradient and
             lr of every step, and the values and moments (exp_avg, exp_avg_sq) after every step.
  schedules  learning rates per step (0-based: the rate the step trains with) from Hugging Face
             transformers' get_{constant,linear,cosine}_schedule_with_warmup and
             get_cosine_with_min_lr_schedule_with_warmup, and torch.optim.lr_scheduler.StepLR.

Run (Python venv outside the repo, `pip install torch transformers`):
    python tests/tools/make_optim_fixture.py [--out tests/data/train/optim_fixture.json]
Floats are written with Python's repr of the float32 value, so they parse back exactly.
"""
import argparse
import json
import os

import torch
import transformers
from transformers import (get_constant_schedule_with_warmup, get_cosine_schedule_with_warmup,
                          get_cosine_with_min_lr_schedule_with_warmup, get_linear_schedule_with_warmup)

SEED = 20261203


def f32list(t):
    return [float(x) for x in t.detach().to(torch.float32).reshape(-1).tolist()]


def adamw_case(name, betas, eps, weight_decay, lrs, grad_scale):
    g = torch.Generator().manual_seed(SEED + len(name))
    w = torch.randn(3, 4, generator=g, dtype=torch.float32)
    b = torch.randn(4, generator=g, dtype=torch.float32) * 0.5
    w.requires_grad_(True)
    b.requires_grad_(True)
    opt = torch.optim.AdamW([{"params": [w], "weight_decay": weight_decay}, {"params": [b], "weight_decay": 0.0}],
                            lr=lrs[0], betas=betas, eps=eps, foreach=False)
    case = {"name": name, "beta1": betas[0], "beta2": betas[1], "eps": eps, "weight_decay": weight_decay,
            "w0": f32list(w), "b0": f32list(b), "steps": []}
    for lr in lrs:
        gw = torch.randn(3, 4, generator=g, dtype=torch.float32) * grad_scale
        gb = torch.randn(4, generator=g, dtype=torch.float32) * grad_scale
        w.grad = gw.clone()
        b.grad = gb.clone()
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
        sw, sb = opt.state[w], opt.state[b]
        case["steps"].append({"lr": lr, "gw": f32list(gw), "gb": f32list(gb), "w": f32list(w), "b": f32list(b),
                              "mw": f32list(sw["exp_avg"]), "vw": f32list(sw["exp_avg_sq"]),
                              "mb": f32list(sb["exp_avg"]), "vb": f32list(sb["exp_avg_sq"])})
    return case


def schedule_rates(make, base_lr, n):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=base_lr)
    sched = make(opt)
    rates = []
    for _ in range(n):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return rates


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data", "train", "optim_fixture.json"))
    args = ap.parse_args()

    adamw = [
        adamw_case("ours", (0.9, 0.95), 1e-8, 0.1, [1e-3, 2e-3, 5e-4, 1e-3, 0.0, 3e-3, 1e-3, 1e-3], 1.0),
        adamw_case("torch-defaults", (0.9, 0.999), 1e-8, 0.01, [1e-2] * 6, 1.0),
        adamw_case("tiny-grads-large-eps", (0.8, 0.9), 1e-3, 0.5, [5e-2, 1e-1, 5e-2, 2e-2, 1e-2], 1e-4),
    ]
    n = 40
    schedules = [
        {"kind": "constant", "base_lr": 3e-4, "warmup": 5, "total": 30, "min_lr_ratio": 0.0,
         "rates": schedule_rates(lambda o: get_constant_schedule_with_warmup(o, 5), 3e-4, n)},
        {"kind": "linear", "base_lr": 1e-3, "warmup": 4, "total": 30, "min_lr_ratio": 0.0,
         "rates": schedule_rates(lambda o: get_linear_schedule_with_warmup(o, 4, 30), 1e-3, n)},
        {"kind": "cosine", "base_lr": 6e-4, "warmup": 10, "total": 35, "min_lr_ratio": 0.0,
         "rates": schedule_rates(lambda o: get_cosine_schedule_with_warmup(o, 10, 35), 6e-4, n)},
        {"kind": "cosine", "base_lr": 6e-4, "warmup": 3, "total": 30, "min_lr_ratio": 0.1,
         "rates": schedule_rates(lambda o: get_cosine_with_min_lr_schedule_with_warmup(o, 3, 30, min_lr_rate=0.1), 6e-4, n)},
        {"kind": "cosine", "base_lr": 1e-3, "warmup": 0, "total": 25, "min_lr_ratio": 0.0,
         "rates": schedule_rates(lambda o: get_cosine_schedule_with_warmup(o, 0, 25), 1e-3, n)},
        {"kind": "step", "base_lr": 1e-2, "warmup": 0, "total": 40, "step_size": 7, "gamma": 0.5,
         "rates": schedule_rates(lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=7, gamma=0.5), 1e-2, n)},
    ]
    doc = {"generator": "tests/tools/make_optim_fixture.py",
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
           "adamw": adamw, "schedules": schedules}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
