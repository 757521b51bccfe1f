#!/usr/bin/env python3
"""Reference values of the preference losses, as TRL computes them, on fixed tensors.

Writes tests/data/train/preference_fixture.json, read by tests/engine/test_align.cpp.

The formulas are TRL's, written out in plain Python (no torch, no numpy needed):
  RewardTrainer.compute_loss:   loss = -logsigmoid(rewards_chosen - rewards_rejected).mean()
  DPOTrainer.dpo_loss, loss_type "sigmoid", label_smoothing 0:
      logits = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)
      losses = -logsigmoid(beta * logits)
      chosen_rewards = beta * (policy_chosen - ref_chosen); rejected_rewards = beta * (policy_rejected - ref_rejected)
      metrics: rewards/chosen = chosen_rewards.mean(), rewards/rejected, rewards/accuracies =
      (chosen_rewards > rejected_rewards).float().mean(), rewards/margins = (chosen - rejected).mean(),
      logps/chosen = policy_chosen.mean(), logps/rejected = policy_rejected.mean()
Gradients are the analytic derivatives of the mean loss (what torch.autograd returns for them).
"""
import json
import math
import os
import random


def logsigmoid(x):
    # log(sigmoid(x)) = -softplus(-x), evaluated without overflow.
    return -(max(-x, 0.0) + math.log1p(math.exp(-abs(x))))


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def f32(x):
    # Inputs are float32 in the engine: round them here so both sides start from the same numbers.
    import struct
    return struct.unpack("f", struct.pack("f", x))[0]


def main():
    rng = random.Random(24)
    n = 7
    rc = [f32(rng.uniform(-3, 3)) for _ in range(n)]
    rr = [f32(rng.uniform(-3, 3)) for _ in range(n)]
    bt_loss = sum(-logsigmoid(c - r) for c, r in zip(rc, rr)) / n
    reward = {
        "chosen": rc, "rejected": rr, "loss": bt_loss,
        "accuracy": sum(1.0 for c, r in zip(rc, rr) if c > r) / n,
        "margin": sum(c - r for c, r in zip(rc, rr)) / n,
        "d_chosen": [-sigmoid(-(c - r)) / n for c, r in zip(rc, rr)],
        "d_rejected": [sigmoid(-(c - r)) / n for c, r in zip(rc, rr)],
    }
    dpo = []
    for beta in (0.1, 0.5):
        pc = [f32(rng.uniform(-80, -20)) for _ in range(n)]
        pr = [f32(rng.uniform(-80, -20)) for _ in range(n)]
        fc = [f32(p + rng.uniform(-5, 5)) for p in pc]
        fr = [f32(p + rng.uniform(-5, 5)) for p in pr]
        logits = [(a - b) - (c - d) for a, b, c, d in zip(pc, pr, fc, fr)]
        cr = [beta * (a - c) for a, c in zip(pc, fc)]
        rj = [beta * (b - d) for b, d in zip(pr, fr)]
        dpo.append({
            "beta": beta, "policy_chosen": pc, "policy_rejected": pr, "ref_chosen": fc, "ref_rejected": fr,
            "loss": sum(-logsigmoid(beta * z) for z in logits) / n,
            "rewards/chosen": sum(cr) / n, "rewards/rejected": sum(rj) / n,
            "rewards/accuracies": sum(1.0 for a, b in zip(cr, rj) if a > b) / n,
            "rewards/margins": sum(a - b for a, b in zip(cr, rj)) / n,
            "logps/chosen": sum(pc) / n, "logps/rejected": sum(pr) / n,
            "d_chosen": [-beta * sigmoid(-beta * z) / n for z in logits],
            "d_rejected": [beta * sigmoid(-beta * z) / n for z in logits],
        })
    out = os.path.join(os.path.dirname(__file__), "..", "data", "train", "preference_fixture.json")
    with open(out, "w") as f:
        json.dump({"reward": reward, "dpo": dpo}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
