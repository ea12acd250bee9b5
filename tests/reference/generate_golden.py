"""Writes the golden states that tests/model_reference_test.cpp checks lengen against:
tests/data/model_reference/<name>.json, one per tiny configuration below.

    /usr/bin/python3 tests/reference/generate_golden.py

Each state holds the config, every weight by lengen's parameter name, a batch of samples
and its layout, the logits at the target positions, the loss, every gradient, and the
losses and weights over three AdamW steps. Gradients and trained weights are stored as a
summary per parameter (norm, a dot product with a fixed probe, the first entries) to keep
the files small. See README.md.
"""
import json
import math
import os

import torch

import model
import training

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "data", "model_reference")

SIZES = {"layers": 2, "d_model": 8, "heads": 4, "d_head": 4, "d_mlp": 16}
SYMBOLS = 6
VOCAB = SYMBOLS + model.FIRST_SYMBOL

# Together the configurations cover every length scaling, every position encoding and
# the normalizers softmax, sparsemax, entmax-1.5 and alpha-entmax with a learned alpha.
CONFIGS = {
    "softmax_none_rope": {"normalizer": "softmax", "scaling": "none", "positions": "rope"},
    "sparsemax_ssmax_alibi": {"normalizer": "sparsemax", "scaling": "ssmax", "positions": "alibi"},
    "asentmax_nape": {"normalizer": "entmax15", "scaling": "asentmax", "positions": "nape"},
    "learned_alpha_learned_nope": {"normalizer": "entmax", "learn_alpha": True, "alpha": 1.5,
                                   "scaling": "learned", "positions": "nope"},
    "ssmax_nape": {"normalizer": "softmax", "scaling": "ssmax", "positions": "nape"},
}

TRAIN = {"lr": 0.01, "warmup": 2, "steps": 4, "schedule": "cosine", "min_lr_ratio": 0.1,
         "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.05}
STEPS = 3
# A longer schedule whose every step the test reads back, warmup and cosine both.
SCHEDULE = {"lr": 0.01, "warmup": 3, "steps": 10, "schedule": "cosine", "min_lr_ratio": 0.1}

SAMPLES = [([3, 0, 5], [5, 0, 3]), ([1, 4], [4, 1]), ([2, 2, 5, 0], [0, 5, 2, 2])]


def short(t):
    """Four significant digits: the weights are stored exactly as the reference uses them."""
    return torch.tensor([float("%.4g" % v) for v in t.flatten().tolist()], dtype=torch.float64).view(t.shape)


def parameter_shapes(config):
    """lengen's parameter names and shapes for this config."""
    m, att = config["model"], config["model"]["attention"]
    d, inner, heads = m["d_model"], m["heads"] * m["d_head"], m["heads"]
    scaled = heads - model.first_scaled_head(config)
    shapes = {"embedding.weight": [VOCAB, d]}
    for layer in range(m["layers"]):
        b = "block%d." % layer
        for norm in ["pre_attention_norm", "post_attention_norm", "pre_mlp_norm", "post_mlp_norm"]:
            shapes[b + norm + ".weight"] = [d]
        for proj in ["q_proj", "k_proj", "v_proj"]:
            shapes[b + "attention." + proj + ".weight"] = [inner, d]
        shapes[b + "attention.out_proj.weight"] = [d, inner]
        s = b + "attention.scaling."
        if att["scaling"] == "ssmax":
            shapes[s + "scale"] = [scaled]
        elif att["scaling"] == "learned":
            shapes[s + "beta"], shapes[s + "gamma"] = [scaled], [scaled]
        elif att["scaling"] == "asentmax":
            for proj in ["beta_proj", "gamma_proj"]:
                shapes[s + proj + ".weight"], shapes[s + proj + ".bias"] = [scaled, d], [scaled]
        if att.get("learn_alpha", False):
            shapes[b + "attention.alpha.logit"] = [heads]
        shapes[b + "mlp.gate.weight"], shapes[b + "mlp.up.weight"] = [m["d_mlp"], d], [m["d_mlp"], d]
        shapes[b + "mlp.down.weight"] = [d, m["d_mlp"]]
    shapes["final_norm.weight"] = [d]
    shapes["head.weight"] = [VOCAB, d]
    return shapes


def random_weight(name, shape):
    """No weight starts at an identity value (norm weights at 0, projection biases at 0),
    so that a mistake in how any of them enters the model changes the numbers."""
    if name.endswith("norm.weight") or name.endswith(".bias"):
        return torch.randn(shape) * 0.3
    if name.endswith("scaling.scale"):
        return 1 + torch.randn(shape) * 0.3
    if name.endswith("scaling.beta"):
        return torch.rand(shape) * 0.9 + 0.1
    if name.endswith("scaling.gamma"):
        return torch.randn(shape) * 0.5
    if name.endswith("alpha.logit"):
        return torch.randn(shape)
    if name == "embedding.weight":
        return torch.randn(shape)
    return torch.randn(shape) * 0.4


def summary(t):
    """Norm, dot product with the fixed probe sin(1), sin(2), ..., and the first entries."""
    flat = t.flatten()
    probe = torch.sin(torch.arange(1, flat.numel() + 1, dtype=torch.float64))
    return {"norm": float(flat.norm()), "probe": float((flat * probe).sum()), "first": flat[:4].tolist()}


def golden_state(name, attention, seed):
    torch.manual_seed(seed)
    att = {"normalizer": "softmax", "scaling": "none", "positions": "nope"}
    att.update(attention)
    config = {"model": dict(SIZES, attention=att), "train": dict(TRAIN)}
    params = {n: short(random_weight(n, s)).requires_grad_() for n, s in parameter_shapes(config).items()}
    weights = {n: {"shape": list(p.shape), "values": p.detach().flatten().tolist()} for n, p in params.items()}

    batch = training.collate(SAMPLES)
    logits, loss, grads = training.loss_and_grads(config, params, batch)
    # A clip below the first gradient norm, so that clipping acts.
    grad_norm = math.sqrt(sum(float((g**2).sum()) for g in grads.values()))
    config["train"]["grad_clip"] = float("%.2g" % (0.5 * grad_norm))

    optimizer = training.AdamW(config["train"], params)
    steps = []
    for step in range(STEPS):
        lr = training.learning_rate(config["train"], step)
        _, step_loss, step_grads = training.loss_and_grads(config, params, batch)
        norm = training.clip_gradients(step_grads, config["train"]["grad_clip"])
        optimizer.step(params, step_grads, lr)
        steps.append({"lr": lr, "loss": step_loss, "grad_norm": norm})

    weights_zero = sparsity(config, params, batch)
    print("%-28s loss %.4f  grad norm %.3f  zero weights %.0f%%" % (name, loss, grad_norm, 100 * weights_zero))
    tokens, targets, in_loss, positions = batch
    return {
        "about": "golden state of lengen's model from tests/reference (float64); see tests/reference/README.md",
        "config": config,
        "vocab": VOCAB,
        "samples": [{"src": s, "trg": t} for s, t in SAMPLES],
        "tokens": tokens.tolist(),
        "targets": targets.tolist(),
        "loss_mask": in_loss.to(torch.int64).tolist(),
        "positions": positions.tolist(),
        "weights": weights,
        "logits": logits.tolist(),
        "loss": loss,
        "grads": {n: summary(g) for n, g in grads.items()},
        "steps": steps,
        "weights_after": {n: summary(p.detach()) for n, p in params.items()},
        "schedule": {"train": SCHEDULE, "lrs": [training.learning_rate(SCHEDULE, s) for s in range(SCHEDULE["steps"])]},
    }


def sparsity(config, params, batch):
    """Share of zero attention weights among the visible keys of the first layer, to show
    that the sparse normalizers do cut keys at these weights."""
    tokens, _, _, positions = batch
    captured = []
    original = model.normalize

    def spy(*args):
        out = original(*args)
        captured.append(out.detach())
        return out

    model.normalize = spy
    with torch.no_grad():
        model.logits_at(config, params, tokens, positions, positions >= 0)
    model.normalize = original
    visible = (positions[:, None, :] <= positions[:, :, None]) & (positions[:, None, :] >= 0)
    visible = visible[:, None].expand_as(captured[0])
    return float((captured[0][visible] == 0).to(torch.float64).mean())


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for seed, (name, attention) in enumerate(CONFIGS.items(), start=1):
        state = golden_state(name, attention, seed)
        with open(os.path.join(OUT_DIR, name + ".json"), "w") as f:
            json.dump(state, f, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
