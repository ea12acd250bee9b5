"""lengen's decoder, written out in eager PyTorch from its definition (docs/method.md).

A reader checks this file against the maths, and lengen's C++ against the numbers it
produces (tests/model_reference_test.cpp). It favours plain code over speed: every
parameter is a tensor in a dict keyed by lengen's parameter name, every step is a
function of a few lines, and everything runs in float64.
"""
import math

import torch

PAD, BOS, SEP, EOS, FIRST_SYMBOL = 0, 1, 2, 3, 4

# Scores of keys a query may not see. Far below any real score, so every normalizer gives
# them exactly 0, yet finite: a row with no visible key (a padding query) stays finite
# instead of NaN, and its output reaches no loss term.
MASKED_SCORE = -1e4


# ---------------------------------------------------------------------------------------
# Normalizers: scores z [..., n] -> attention weights along the last dim.


def softmax(z):
    e = torch.exp(z - z.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def sparsemax(z):
    """p = [z - tau]_+ with sum p = 1. The support comes from the sorted scores; tau is
    then a closed form of the supported scores, so autograd gives the exact Jacobian."""
    with torch.no_grad():
        zs = z.sort(dim=-1, descending=True).values
        k = torch.arange(1, z.size(-1) + 1, dtype=z.dtype)
        size = (1 + k * zs > zs.cumsum(-1)).sum(-1, keepdim=True)
        support = z >= zs.gather(-1, size - 1)
    tau = ((z * support).sum(-1, keepdim=True) - 1) / size
    return (z - tau).clamp(min=0)


def entmax15(z):
    """p = [z/2 - tau]_+^2 with sum p = 1. On a support of size k, sum (z/2 - tau)^2 = 1
    is a quadratic in tau; the support is the largest k whose root lies below the k-th score."""
    z = z / 2
    with torch.no_grad():
        zs = z.sort(dim=-1, descending=True).values
        k = torch.arange(1, z.size(-1) + 1, dtype=z.dtype)
        mean = zs.cumsum(-1) / k
        mean_sq = (zs**2).cumsum(-1) / k
        tau_k = mean - torch.sqrt(((1 - k * (mean_sq - mean**2)) / k).clamp(min=0))
        size = (tau_k <= zs).sum(-1, keepdim=True)
        support = z >= zs.gather(-1, size - 1)
    mean = (z * support).sum(-1, keepdim=True) / size
    mean_sq = (z**2 * support).sum(-1, keepdim=True) / size
    tau = mean - torch.sqrt((1 - size * (mean_sq - mean**2)) / size)
    return (z - tau).clamp(min=0) ** 2


def _entmax_weights(z, alpha, tau):
    """[(alpha - 1) z - tau]_+^(1 / (alpha - 1)), with no log(0) on the zeros' gradient path."""
    base = (alpha - 1) * z - tau
    positive = base > 0
    safe = torch.where(positive, base, torch.ones_like(base))
    return torch.where(positive, safe ** (1 / (alpha - 1)), torch.zeros_like(base))


def entmax(z, alpha):
    """alpha-entmax for any alpha > 1 (a tensor broadcasting against z, e.g. one per head).

    tau solves f(tau) = sum p(tau) - 1 = 0; bisection finds it in float64 to the last bit.
    The gradient comes from the implicit function theorem, by one Newton step from the
    detached root: tau = tau* - f(tau*) / f'(tau*) has the value tau* and the derivative
    -(df/dtheta) / f' with respect to z and alpha alike.
    """
    n = z.size(-1)
    with torch.no_grad():
        a = alpha.detach().expand_as(z[..., :1])
        top = (a - 1) * z.max(dim=-1, keepdim=True).values
        lo, hi = top - 1, top - n ** (1 - a)  # f(lo) >= 0 >= f(hi)
        for _ in range(200):
            mid = (lo + hi) / 2
            above = _entmax_weights(z, a, mid).sum(-1, keepdim=True) >= 1
            lo, hi = torch.where(above, mid, lo), torch.where(above, hi, mid)
        root = (lo + hi) / 2
    p = _entmax_weights(z, alpha, root)
    f = p.sum(-1, keepdim=True) - 1
    positive = p > 0
    slope = -torch.where(positive, torch.where(positive, p, torch.ones_like(p)) ** (2 - alpha), torch.zeros_like(p))
    f_prime = slope.sum(-1, keepdim=True) / (alpha - 1)
    return _entmax_weights(z, alpha, root - f / f_prime)


def learned_alpha(logit):
    """alpha per head = 1 + sigmoid(a), kept in [1.01, 2]."""
    return (1 + torch.sigmoid(logit)).clamp(1.01, 2.0)


# ---------------------------------------------------------------------------------------
# Position encodings and length scaling.


def alibi_slopes(config):
    """ALiBi slope per head: 1/(h+1) on every head (alibi) or on the first alibi_heads
    (nape, default half the heads); 0 elsewhere."""
    att, heads = config["model"]["attention"], config["model"]["heads"]
    if att["positions"] == "alibi":
        count = heads
    elif att["positions"] == "nape":
        count = att.get("alibi_heads", -1)
        count = heads // 2 if count < 0 else count
    else:
        count = 0
    return torch.tensor([1.0 / (h + 1) if h < count else 0.0 for h in range(heads)], dtype=torch.float64)


def first_scaled_head(config):
    """Length scaling touches every head, or under NAPE only the NoPE heads after the ALiBi ones."""
    if config["model"]["attention"]["positions"] != "nape":
        return 0
    return int((alibi_slopes(config) > 0).sum())


def rope(x, positions, base):
    """GPT-NeoX rotate-half: dims i and i + d/2 turn by the angle pos * base^(-2i/d).
    x [B, H, T, d], positions [B, T]."""
    half = x.size(-1) // 2
    inv_freq = base ** (-torch.arange(half, dtype=torch.float64) * 2 / x.size(-1))
    angle = (positions.to(torch.float64)[..., None] * inv_freq)[:, None]  # [B, 1, T, half]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * angle.cos() - x2 * angle.sin(), x2 * angle.cos() + x1 * angle.sin()], dim=-1)


def length_factor(config, params, prefix, x, positions):
    """The factor multiplying each scaled head's query, [B, scaled heads, T, 1], or None.
    x is the attention block's normalised input [B, T, d]; l = log(i + 2)."""
    att = config["model"]["attention"]
    kind = att["scaling"]
    if kind == "none":
        return None
    p = lambda name: params[prefix + "scaling." + name]
    log_len = torch.log(positions.clamp(min=0).to(torch.float64) + 2)[:, None, :, None]
    if kind == "ssmax":
        return p("scale")[None, :, None, None] * log_len
    delta = att.get("scaling_delta", 1.0)
    if kind == "learned":
        return delta + p("beta")[None, :, None, None] * log_len ** p("gamma")[None, :, None, None]
    # asentmax: beta and gamma per query from the block input.
    beta = torch.nn.functional.softplus(x @ p("beta_proj.weight").T + p("beta_proj.bias"))
    gamma = att.get("scaling_gamma_range", 2.0) * torch.tanh(x @ p("gamma_proj.weight").T + p("gamma_proj.bias"))
    return delta + beta.transpose(1, 2)[..., None] * log_len ** gamma.transpose(1, 2)[..., None]


# ---------------------------------------------------------------------------------------
# The decoder.


def rms_norm(x, weight):
    return x / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-6) * (1 + weight)


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def normalize(config, params, prefix, scores):
    att = config["model"]["attention"]
    name = att["normalizer"]
    if name == "softmax":
        return softmax(scores)
    if name == "sparsemax":
        return sparsemax(scores)
    if name == "entmax15":
        return entmax15(scores)
    if name == "entmax" and att.get("learn_alpha", False):
        return entmax(scores, learned_alpha(params[prefix + "alpha.logit"])[None, :, None, None])
    raise ValueError("the reference has no normalizer " + name)


def attention(config, params, prefix, x, positions):
    """x [B, T, d] (normalised), positions [B, T] (-1 on padding) -> [B, T, d]."""
    m = config["model"]
    batch, length = x.shape[:2]
    heads, d_head = m["heads"], m["d_head"]
    split = lambda t: t.view(batch, length, heads, d_head).transpose(1, 2)  # [B, H, T, d_head]
    q = split(x @ params[prefix + "q_proj.weight"].T)
    k = split(x @ params[prefix + "k_proj.weight"].T)
    v = split(x @ params[prefix + "v_proj.weight"].T)
    if m["attention"]["positions"] == "rope":
        base = m["attention"].get("rope_base", 10000.0)
        q, k = rope(q, positions, base), rope(k, positions, base)
    factor = length_factor(config, params, prefix, x, positions)
    if factor is not None:
        first = first_scaled_head(config)
        q = torch.cat([q[:, :first], q[:, first:] * factor], dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
    distance = (positions[:, :, None] - positions[:, None, :]).to(torch.float64)  # i - j, [B, T, T]
    scores = scores - alibi_slopes(config)[None, :, None, None] * distance[:, None]
    visible = (positions[:, None, :] <= positions[:, :, None]) & (positions[:, None, :] >= 0)
    scores = torch.where(visible[:, None], scores, torch.full_like(scores, MASKED_SCORE))
    out = normalize(config, params, prefix, scores) @ v  # [B, H, T, d_head]
    return out.transpose(1, 2).reshape(batch, length, heads * d_head) @ params[prefix + "out_proj.weight"].T


def mlp(params, prefix, x):
    gate = x @ params[prefix + "gate.weight"].T
    up = x @ params[prefix + "up.weight"].T
    return (gelu_tanh(gate) * up) @ params[prefix + "down.weight"].T


def block(config, params, prefix, x, positions):
    norm = lambda name, t: rms_norm(t, params[prefix + name + ".weight"])
    h = x + norm("post_attention_norm", attention(config, params, prefix + "attention.", norm("pre_attention_norm", x), positions))
    return h + norm("post_mlp_norm", mlp(params, prefix + "mlp.", norm("pre_mlp_norm", h)))


def logits_at(config, params, tokens, positions, select):
    """Logits [N, vocab] at the positions where select [B, T] is true, row-major."""
    x = params["embedding.weight"][tokens] * math.sqrt(config["model"]["d_model"])
    for layer in range(config["model"]["layers"]):
        x = block(config, params, "block%d." % layer, x, positions)
    x = rms_norm(x, params["final_norm.weight"])
    return x[select] @ params["head.weight"].T
