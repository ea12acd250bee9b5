"""Checks the reference's normalizers against the entmax library's golden vectors
(tests/data/normalizers.json): weights, gradients for the scores and, for alpha-entmax,
for alpha. Run before trusting a regenerated golden state:

    /usr/bin/python3 tests/reference/check_normalizers.py
"""
import json
import os
import sys

import torch

import model

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 1e-9


def rows(values):
    return torch.tensor([[float("-inf") if v is None else v for v in row] for row in values], dtype=torch.float64)


def check(case):
    """Largest absolute errors of the case's weights and of its gradients, over rows with a
    visible entry."""
    x = rows(case["x"])
    masked = torch.isinf(x)
    z = torch.where(masked, torch.full_like(x, model.MASKED_SCORE), x).requires_grad_()
    alpha = None
    if case["kind"] == "bisect":
        alpha = torch.full((x.size(0), 1), case["alpha"], dtype=torch.float64, requires_grad=True)
        p = model.entmax(z, alpha)
    else:
        p = getattr(model, case["kind"])(z)
    (p * torch.tensor(case["grad_out"], dtype=torch.float64)).sum().backward()
    live = ~masked.all(-1)
    largest = lambda e: float(e.abs().max()) if e.numel() else 0.0
    grad_error = largest((z.grad - rows(case["grad_x"]))[live])
    if alpha is not None:
        expected = torch.tensor(case["grad_alpha"], dtype=torch.float64).flatten()
        grad_error = max(grad_error, largest((alpha.grad.flatten() - expected)[live]))
    return largest((p.detach() - rows(case["p"]))[live]), grad_error


def main():
    with open(os.path.join(HERE, "..", "data", "normalizers.json")) as f:
        cases = json.load(f)["cases"]
    failed = 0
    for case in cases:
        weight_error, grad_error = check(case)
        # At a tie on the support's edge the Jacobian is not unique; the library and the
        # reference pick different ones, so only the weights are compared there.
        error = weight_error if "ties" in case["name"] else max(weight_error, grad_error)
        if error > TOLERANCE:
            print("%s: error %.3g" % (case["name"], error))
            failed += 1
    print("%d of %d cases agree to %g" % (len(cases) - failed, len(cases), TOLERANCE))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
