"""lengen's sequence layout, loss and optimizer, written out from their definition
(docs/method.md): what one training step does to the model of model.py."""
import math

import torch

import model


def encode(src, trg):
    """One sample of task symbols -> (input, target, in_loss): the sequence is
    BOS src SEP trg EOS; the model reads all but its last token and predicts all but its
    first, and the loss covers the target tokens and the final EOS."""
    seq = [model.BOS] + [s + model.FIRST_SYMBOL for s in src] + [model.SEP]
    seq += [t + model.FIRST_SYMBOL for t in trg] + [model.EOS]
    in_loss = [0] * (len(src) + 1) + [1] * (len(trg) + 1)
    return seq[:-1], seq[1:], in_loss


def collate(samples):
    """Samples -> tensors [B, T], right-padded with PAD; positions 0.. on the tokens and
    -1 on the padding, which no query ever sees."""
    encoded = [encode(src, trg) for src, trg in samples]
    width = max(len(e[0]) for e in encoded)
    pad = lambda row, value: row + [value] * (width - len(row))
    tokens = torch.tensor([pad(e[0], model.PAD) for e in encoded])
    targets = torch.tensor([pad(e[1], model.PAD) for e in encoded])
    in_loss = torch.tensor([pad(e[2], 0) for e in encoded], dtype=torch.bool)
    positions = torch.tensor([pad(list(range(len(e[0]))), -1) for e in encoded])
    return tokens, targets, in_loss, positions


def cross_entropy(logits, targets):
    """Token mean of -log softmax(logits)[target]."""
    top = logits.max(-1, keepdim=True).values
    log_z = top.squeeze(-1) + torch.log(torch.exp(logits - top).sum(-1))
    return (log_z - logits.gather(-1, targets[:, None]).squeeze(-1)).mean()


def learning_rate(train, step):
    """Linear warmup to lr over `warmup` steps (step s gets lr (s + 1) / warmup), then a cosine
    from lr at the first step after warmup to lr * min_lr_ratio at the last step."""
    lr, warmup = train["lr"], train["warmup"]
    if step < warmup:
        return lr * (step + 1) / warmup
    floor = lr * train.get("min_lr_ratio", 0.0)
    progress = min(1.0, (step - warmup) / max(1, train["steps"] - warmup))
    return floor + (lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def clip_gradients(grads, max_norm):
    """Scales all gradients together so that their joint norm is at most max_norm
    (the 1e-6 keeps the division finite). Returns the norm before clipping."""
    norm = math.sqrt(sum(float((g**2).sum()) for g in grads.values()))
    coef = max_norm / (norm + 1e-6)
    if max_norm > 0 and coef < 1:
        for name in grads:
            grads[name] = grads[name] * coef
    return norm


class AdamW:
    """Adam with decoupled weight decay (Loshchilov and Hutter): the decay shrinks the
    weights by lr * weight_decay before the bias-corrected Adam update."""

    def __init__(self, train, params):
        self.beta1, self.beta2 = train.get("beta1", 0.9), train.get("beta2", 0.99)
        self.weight_decay, self.eps = train.get("weight_decay", 0.0), 1e-8
        self.m = {name: torch.zeros_like(p) for name, p in params.items()}
        self.v = {name: torch.zeros_like(p) for name, p in params.items()}
        self.t = 0

    def step(self, params, grads, lr):
        self.t += 1
        with torch.no_grad():
            for name, p in params.items():
                g = grads[name]
                self.m[name] = self.beta1 * self.m[name] + (1 - self.beta1) * g
                self.v[name] = self.beta2 * self.v[name] + (1 - self.beta2) * g * g
                m_hat = self.m[name] / (1 - self.beta1**self.t)
                v_hat = self.v[name] / (1 - self.beta2**self.t)
                p.mul_(1 - lr * self.weight_decay)
                p.sub_(lr * m_hat / (torch.sqrt(v_hat) + self.eps))


def loss_and_grads(config, params, batch):
    """The loss of one batch and every parameter's gradient."""
    tokens, targets, in_loss, positions = batch
    for p in params.values():
        p.grad = None
    logits = model.logits_at(config, params, tokens, positions, in_loss)
    loss = cross_entropy(logits, targets[in_loss])
    loss.backward()
    return logits.detach(), float(loss), {name: p.grad.clone() for name, p in params.items()}
