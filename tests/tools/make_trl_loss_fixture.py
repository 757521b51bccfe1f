#!/usr/bin/env python3
"""Reference values of the alignment losses as TRL itself computes them, on fixed tensors.

Writes tests/data/train/trl_loss_fixture.json, read by tests/engine/test_align.cpp (reward model, DPO) and
tests/engine/test_grpo.cpp (GRPO). Where make_dpo_fixture.py writes TRL's formulas out in plain Python, this
script runs TRL's own code: RewardTrainer.compute_loss, DPOTrainer._compute_loss and GRPOTrainer._compute_loss,
each called on a stand-in `self` that holds only the settings the method reads and a stand-in model whose
outputs are the fixed tensors (the sequence log-probs, rewards or per-token log-probs a real model would
produce). Gradients come from torch.autograd on those tensors. Written against trl 1.16.0 and torch 2.15.0;
run it in a virtual environment outside the repository:

    python3 -m venv /tmp/trlvenv && /tmp/trlvenv/bin/pip install torch==2.15.0 trl==1.16.0
    /tmp/trlvenv/bin/python tests/tools/make_trl_loss_fixture.py
"""
import collections
import json
import os
import random
import struct
import types

import torch
import trl
from trl.trainer.dpo_trainer import DPOTrainer
from trl.trainer.grpo_trainer import GRPOTrainer
from trl.trainer.reward_trainer import RewardTrainer


def f32(x):
    # The engine's inputs are float32: both sides start from the same numbers.
    return struct.unpack("f", struct.pack("f", x))[0]


class SingleProcess:
    """The accelerator of one process: gathers and reductions return their input."""

    device = torch.device("cpu")
    num_processes = 1
    sync_gradients = True

    def gather(self, x):
        return x

    def gather_for_metrics(self, x):
        return x

    def reduce(self, x, reduction="sum"):
        return x


def stand_in(**settings):
    """A trainer `self` in training mode with its metric store, plus the given settings."""
    s = types.SimpleNamespace(
        accelerator=SingleProcess(),
        model=types.SimpleNamespace(training=True),
        _metrics={"train": collections.defaultdict(list), "eval": collections.defaultdict(list)},
        _total_train_tokens=0,
        _tp_size=1,
    )
    s.__dict__.update(settings)
    return s


def last_metrics(s):
    return {name: values[-1] for name, values in s._metrics["train"].items() if values}


def reward_case(rng, n):
    chosen = [f32(rng.uniform(-3, 3)) for _ in range(n)]
    rejected = [f32(rng.uniform(-3, 3)) for _ in range(n)]
    rewards = torch.tensor(chosen + rejected, dtype=torch.float32).unsqueeze(-1).requires_grad_()
    model = lambda **_: types.SimpleNamespace(logits=rewards)  # noqa: E731 (a model's reward head output)
    s = stand_in(args=types.SimpleNamespace(center_rewards_coefficient=None))
    loss = RewardTrainer.compute_loss(s, model, {"attention_mask": torch.ones(2 * n, 3, dtype=torch.long)})
    loss.backward()
    grad = rewards.grad.squeeze(-1).tolist()
    m = last_metrics(s)
    return {"chosen": chosen, "rejected": rejected, "loss": loss.item(), "accuracy": m["accuracy"],
            "margin": m["margin"], "d_chosen": grad[:n], "d_rejected": grad[n:]}


def dpo_case(rng, n, beta):
    pc = [f32(rng.uniform(-80, -20)) for _ in range(n)]
    pr = [f32(rng.uniform(-80, -20)) for _ in range(n)]
    fc = [f32(p + rng.uniform(-5, 5)) for p in pc]
    fr = [f32(p + rng.uniform(-5, 5)) for p in pr]
    # Two positions per row: after the shift one completion position, whose log-prob is the sequence's.
    logps = torch.tensor(pc + pr, dtype=torch.float32).unsqueeze(-1).requires_grad_()
    outputs = types.SimpleNamespace(log_probs=logps, entropy=torch.zeros(2 * n, 1),
                                    mean_logits=torch.zeros(2 * n, 1), is_top1=torch.zeros(2 * n, 1, dtype=torch.bool))
    model = lambda **_: outputs  # noqa: E731
    s = stand_in(aux_loss_enabled=False, ld_alpha=None, precompute_ref_logps=True, f_divergence_type="reverse_kl",
                 loss_types=["sigmoid"], loss_weights=[1.0], beta=beta, label_smoothing=0.0, use_weighting=False)
    inputs = {"input_ids": torch.ones(2 * n, 2, dtype=torch.long), "attention_mask": torch.ones(2 * n, 2, dtype=torch.long),
              "completion_mask": torch.ones(2 * n, 2, dtype=torch.long),
              "ref_chosen_logps": torch.tensor(fc), "ref_rejected_logps": torch.tensor(fr)}
    loss = DPOTrainer._compute_loss(s, model, inputs, return_outputs=False)
    loss.backward()
    grad = logps.grad.squeeze(-1).tolist()
    m = last_metrics(s)
    case = {"beta": beta, "policy_chosen": pc, "policy_rejected": pr, "ref_chosen": fc, "ref_rejected": fr,
            "loss": loss.item(), "d_chosen": grad[:n], "d_rejected": grad[n:]}
    for name in ("rewards/chosen", "rewards/rejected", "rewards/accuracies", "rewards/margins", "logps/chosen",
                 "logps/rejected"):
        case[name] = m[name]
    return case


def grpo_case(rng, B, T, clip, beta):
    lengths = [rng.randint(1, T) for _ in range(B)]
    mask = [[1 if t < lengths[b] else 0 for t in range(T)] for b in range(B)]
    logp = [[f32(rng.uniform(-4, -0.05)) for _ in range(T)] for _ in range(B)]
    # Old log-probs up to 0.5 nats away, so some ratios leave [1 - clip, 1 + clip] on both sides.
    old = [[f32(x + rng.uniform(-0.5, 0.5)) for x in row] for row in logp]
    ref = [[f32(x + rng.uniform(-1, 1)) for x in row] for row in logp]
    advantages = [f32(rng.uniform(-1.5, 1.5)) for _ in range(B)]
    logp_t = torch.tensor(logp, dtype=torch.float32).requires_grad_()
    s = stand_in(top_entropy_quantile=1.0, off_policy_mask_threshold=None, importance_sampling_level="token",
                 beta=beta, loss_type="grpo", epsilon_low=clip, epsilon_high=clip, use_vllm=False,
                 vllm_importance_sampling_correction=False, current_gradient_accumulation_steps=1,
                 _entropy_bonus_enabled=False, aux_loss_enabled=False,
                 args=types.SimpleNamespace(use_bias_correction_kl=False, delta=None),
                 _get_per_token_logps_and_entropies=lambda *a, **k: (logp_t, torch.zeros(B, T), None))
    inputs = {"prompt_ids": torch.ones(B, 1, dtype=torch.long), "prompt_mask": torch.ones(B, 1, dtype=torch.long),
              "completion_ids": torch.ones(B, T, dtype=torch.long),
              "completion_mask": torch.tensor(mask, dtype=torch.long),
              "advantages": torch.tensor(advantages), "old_per_token_logps": torch.tensor(old),
              "ref_per_token_logps": torch.tensor(ref)}
    loss = GRPOTrainer._compute_loss(s, None, inputs)
    loss.backward()
    m = last_metrics(s)
    flat = lambda rows: [x for row in rows for x in row]  # noqa: E731
    return {"B": B, "T": T, "clip": clip, "beta": beta, "logp": flat(logp), "old_logp": flat(old),
            "ref_logp": flat(ref), "mask": flat(mask), "advantages": advantages, "loss": loss.item(),
            "kl": m.get("kl"), "clip_ratio": m["clip_ratio/region_mean"], "dlogp": flat(logp_t.grad.tolist())}


def main():
    rng = random.Random(28)
    fixture = {
        "trl_version": trl.__version__,
        "torch_version": torch.__version__,
        "reward": reward_case(rng, 9),
        "dpo": [dpo_case(rng, 9, beta) for beta in (0.1, 0.5)],
        "grpo": [grpo_case(rng, 6, 7, 0.2, 0.04), grpo_case(rng, 5, 9, 0.1, 0.0)],
    }
    out = os.path.join(os.path.dirname(__file__), "..", "data", "train", "trl_loss_fixture.json")
    with open(out, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
