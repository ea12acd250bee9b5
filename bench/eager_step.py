#!/usr/bin/env python3
"""Eager PyTorch's time for the training step `lengen bench step` times, on the same shape.

Needs python3-torch (apt install python3-torch); not part of the tests. Debian's package is
PyTorch 1.13, the same ATen as Debian's libtorch-dev that lengen builds against; run it with the
system interpreter (/usr/bin/python3) when another python3 comes first on PATH.

The model is lengen's Decoder (src/model/decoder.cpp, docs/method.md) with the softmax
normalizer and no length scaling, as bench step's Softmax row: token embedding times
sqrt(d_model); per block pre- and post-norm RMSNorm (weight 1 + w, eps 1e-6) around attention
and around the gated-GELU MLP (down(gelu_tanh(gate x) * up x)); attention with q, k, v and out
projections without bias, scores q.k^T / sqrt(d_head) plus the ALiBi bias -m_h (i - j) (nape:
the first heads / 2 heads with slopes 1/(h+1), the rest NoPE), causal mask, softmax; final
RMSNorm and the output layer. Its softmax is ATen's, forward and backward; lengen's softmax
normalizer (src/normalizers/softmax.cpp) runs the same forward plus a check for fully masked
rows, and its own backward p (g - sum p g). The step is src/bench/step_bench.cpp's, which is the
trainer's: the output layer and the cross entropy at the target positions only (bench step's
`targets`; here the last positions of each row of a random batch, the same count, so the same
FLOPs), backward, gradient clipping at norm 1.0, AdamW(lr 1e-3, the config's betas and weight
decay; 0.9, 0.99 and 0 without one).

Time: the median of --repeats steps after 5 warm-up steps, in thread CPU time at one thread (as
bench step measures one thread: src/bench/bench_output.h), wall time otherwise. FLOPs and the
floor: include/bench/lengen/step_bench.h's formula, against a 512^3 sgemm timed as
src/bench/sgemm_rate.cpp does (one thread's rate x threads). --config takes the shape as bench
step does: the resolved model and train.batch_size (`lengen config show`), and the tokens at
task.len_max and the vocabulary from one short `lengen bench step --json` (--lengen names the
binary).

--lengen-malloc sets glibc malloc as lengen does at start (src/runtime/allocator.cpp: trim and
mmap thresholds 1 GiB, top pad 64 MiB), so that freed activations stay in the heap instead of going
back to the kernel and faulting in again each step; without it, glibc's defaults stand.

Same kernels: OpenBLAS chooses its kernels when it loads; `lengen info` says which it runs.
Give the script the same ones: OPENBLAS_CORETYPE=<lengen's> OPENBLAS_NUM_THREADS=1. --threads N
sets LibTorch's and OpenBLAS's threads as lengen does; for N > 1 also set what lengen sets then
(include/runtime/lengen/thread_waits.h): OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4.

  OPENBLAS_CORETYPE=Cooperlake OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/eager_step.py \\
      --config configs/quick/mqmtar_paper.json --threads 1 --repeats 10
"""

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

FIRST_SYMBOL = 4  # include/tasks/lengen/sequence.h: ids below are special tokens
WARMUP_STEPS = 5  # src/bench/step_bench.cpp's kWarmupSteps


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + self.weight)


class Mlp(nn.Module):
    def __init__(self, d_model, d_mlp):
        super().__init__()
        self.gate = nn.Linear(d_model, d_mlp, bias=False)
        self.up = nn.Linear(d_model, d_mlp, bias=False)
        self.down = nn.Linear(d_mlp, d_model, bias=False)

    def forward(self, x):
        return self.down(F.gelu(self.gate(x), approximate="tanh") * self.up(x))


def position_slopes(positions, heads, alibi_heads, slopes_kind):
    """ALiBi slopes per head (src/attention/positions.cpp): 0 for a NoPE head."""
    def slope(h):
        return 1.0 / (h + 1) if slopes_kind == "linear" else 2.0 ** -h

    if positions == "nope":
        return [0.0] * heads
    if positions == "alibi":
        return [slope(h) for h in range(heads)]
    if positions == "nape":
        count = heads // 2 if alibi_heads < 0 else alibi_heads
        return [slope(h) if h < count else 0.0 for h in range(heads)]
    sys.exit(f"eager_step.py: positions {positions!r} is not in this script (nope, alibi, nape)")


class Attention(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.heads, self.d_head = shape["heads"], shape["d_head"]
        inner = self.heads * self.d_head
        self.q_proj = nn.Linear(shape["d_model"], inner, bias=False)
        self.k_proj = nn.Linear(shape["d_model"], inner, bias=False)
        self.v_proj = nn.Linear(shape["d_model"], inner, bias=False)
        self.out_proj = nn.Linear(inner, shape["d_model"], bias=False)
        self.slopes = position_slopes(shape["positions"], self.heads, shape["alibi_heads"], shape["alibi_slopes"])
        self.register_buffer("slope_tensor", torch.tensor(self.slopes, dtype=torch.double), persistent=False)

    def forward(self, x, positions):
        batch, length, _ = x.shape

        def split_heads(t):
            return t.view(batch, length, self.heads, self.d_head).transpose(1, 2)  # [B, H, T, d_head]

        q, k, v = split_heads(self.q_proj(x)), split_heads(self.k_proj(x)), split_heads(self.v_proj(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_head)
        if any(s != 0.0 for s in self.slopes):
            distance = (positions.unsqueeze(-1) - positions.unsqueeze(-2)).to(scores.dtype)  # [B, Tq, Tk]
            slopes = self.slope_tensor.to(scores.dtype).view(1, -1, 1, 1)
            scores = scores + (-slopes * distance.unsqueeze(1))
        visible = (positions.unsqueeze(1) <= positions.unsqueeze(2)) & (positions.unsqueeze(1) >= 0)
        scores = scores.masked_fill(visible.logical_not().unsqueeze(1), float("-inf"))
        weights = torch.softmax(scores, -1)
        out = torch.matmul(weights, v)
        return self.out_proj(out.transpose(1, 2).reshape(batch, length, self.heads * self.d_head))


class Block(nn.Module):
    def __init__(self, shape):
        super().__init__()
        d = shape["d_model"]
        self.pre_attention_norm = RMSNorm(d)
        self.attention = Attention(shape)
        self.post_attention_norm = RMSNorm(d)
        self.pre_mlp_norm = RMSNorm(d)
        self.mlp = Mlp(d, shape["d_mlp"])
        self.post_mlp_norm = RMSNorm(d)

    def forward(self, x, positions):
        h = x + self.post_attention_norm(self.attention(self.pre_attention_norm(x), positions))
        return h + self.post_mlp_norm(self.mlp(self.pre_mlp_norm(h)))


class Decoder(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.d_model = shape["d_model"]
        self.embedding = nn.Embedding(shape["vocab"], self.d_model)
        self.blocks = nn.ModuleList([Block(shape) for _ in range(shape["layers"])])
        self.final_norm = RMSNorm(self.d_model)
        self.head = nn.Linear(self.d_model, shape["vocab"], bias=False)
        with torch.no_grad():  # initialize_weights: norms 0, the rest N(0, init_std)
            for name, p in self.named_parameters():
                if "norm" in name:
                    p.zero_()
                else:
                    p.normal_(0.0, shape["init_std"])

    def forward(self, tokens, select):
        batch, length = tokens.shape
        positions = torch.arange(length, dtype=torch.long).unsqueeze(0).expand(batch, length)
        x = self.embedding(tokens) * math.sqrt(self.d_model)
        for block in self.blocks:
            x = block(x, positions)
        return self.head(self.final_norm(x)[select])


def training_step_flops(shape):
    """include/bench/lengen/step_bench.h's matrix-product FLOPs of one step."""
    tokens = shape["batch"] * shape["length"]
    d, inner = shape["d_model"], shape["heads"] * shape["d_head"]
    projections = 2.0 * tokens * (4.0 * d * inner + 3.0 * d * shape["d_mlp"])
    attention = 2.0 * 2.0 * tokens * shape["length"] * inner
    head = 2.0 * shape["targets"] * d * shape["vocab"]
    return 3.0 * (shape["layers"] * (projections + attention) + head)


def now(single):
    return time.thread_time() if single else time.perf_counter()


def openblas():
    """The OpenBLAS that LibTorch loaded (the library behind libblas.so.3), None for another BLAS."""
    for name in ("libblas.so.3", "libopenblas.so.0"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib
        except (OSError, AttributeError):
            continue
    return None


def openblas_core():
    """The kernels the loaded OpenBLAS runs."""
    lib = openblas()
    return lib.openblas_get_corename().decode() if lib is not None else "unknown (no OpenBLAS answered)"


def set_compute_threads(threads):
    """src/runtime/compute_threads.cpp: LibTorch's threads and OpenBLAS's pool alike."""
    torch.set_num_threads(threads)
    lib = openblas()
    if lib is not None:
        lib.openblas_set_num_threads(threads)


def sgemm_flops_per_second(threads):
    """src/bench/sgemm_rate.cpp: the best of 12 512^3 products on one thread, times `threads`."""
    size = 512
    set_compute_threads(1)
    a, b, c = torch.randn(size, size), torch.randn(size, size), torch.empty(size, size)
    best = math.inf
    for _ in range(12):
        start = now(True)
        torch.mm(a, b, out=c)
        best = min(best, now(True) - start)
    set_compute_threads(threads)
    return 2.0 * size ** 3 / best * threads


def use_lengen_malloc():
    """src/runtime/allocator.cpp's mallopt calls; True when glibc took all three."""
    libc = ctypes.CDLL(None)
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # <malloc.h>
    return all(libc.mallopt(option, value) == 1 for option, value in
               ((m_trim_threshold, 1 << 30), (m_mmap_threshold, 1 << 30), (m_top_pad, 64 << 20)))


def target_positions(shape):
    """shape["targets"] positions as a [batch, length] mask: the last ones of each row."""
    batch, length = shape["batch"], shape["length"]
    per_row, extra = divmod(shape["targets"], batch)
    select = torch.zeros(batch, length, dtype=torch.bool)
    select[:, length - per_row:] = True
    select[:extra, length - per_row - 1] = True
    return select


def lengen_shape(lengen, config):
    """The shape bench step takes from `config`: its resolved model and train.batch_size
    (`lengen config show`), the tokens of a sequence at task.len_max and the task's vocabulary
    (from one short `lengen bench step --config --json`, which derives them from the task)."""
    def run(*args):
        try:
            return subprocess.run([lengen, *args], check=True, capture_output=True, text=True).stdout
        except FileNotFoundError:
            sys.exit(f"eager_step.py: --config needs the lengen binary: {lengen} is not there (--lengen PATH)")
        except subprocess.CalledProcessError as error:
            sys.exit(f"eager_step.py: {lengen} {' '.join(args)}: {error.stderr.strip()}")

    resolved = json.loads(run("config", "show", config))
    bench = json.loads(run("bench", "step", "--config", config, "--only", "Softmax", "--repeats", "1", "--json"))[0]
    model, attention = resolved["model"], resolved["model"]["attention"]
    return {
        "layers": model["layers"], "d_model": model["d_model"], "heads": model["heads"],
        "d_head": model["d_head"], "d_mlp": model["d_mlp"], "init_std": model["init_std"],
        "positions": attention["positions"], "alibi_heads": attention["alibi_heads"],
        "alibi_slopes": attention["alibi_slopes"], "batch": resolved["train"]["batch_size"],
        "length": bench["length"], "vocab": bench["vocab"], "targets": bench["targets"],
        "betas": (resolved["train"]["beta1"], resolved["train"]["beta2"]),
        "weight_decay": resolved["train"]["weight_decay"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="take the shape from this lengen config, as `lengen bench step --config`")
    parser.add_argument("--lengen", default=os.environ.get("LENGEN", "build/lengen"),
                        help="the lengen binary that reads --config (default $LENGEN or build/lengen)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--d-head", type=int, default=32)
    parser.add_argument("--d-mlp", type=int, help="default 4 x --d-model")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--positions", default="nape", choices=["nope", "alibi", "nape"])
    parser.add_argument("--vocab", type=int, default=36)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads and OpenBLAS's pool, as train.threads")
    parser.add_argument("--repeats", type=int, default=20, help="timed steps (the median is kept)")
    parser.add_argument("--lengen-malloc", action="store_true",
                        help="set glibc malloc's thresholds as lengen does (src/runtime/allocator.cpp)")
    args = parser.parse_args()
    if args.lengen_malloc and not use_lengen_malloc():
        sys.exit("eager_step.py: --lengen-malloc: glibc refused lengen's mallopt settings")

    if args.config:
        shape = lengen_shape(args.lengen, args.config)
    else:
        shape = {
            "layers": args.layers, "d_model": args.d_model, "heads": args.heads, "d_head": args.d_head,
            "d_mlp": args.d_mlp or 4 * args.d_model, "init_std": 0.02, "positions": args.positions,
            "alibi_heads": -1, "alibi_slopes": "linear", "batch": args.batch, "length": args.length,
            "vocab": args.vocab, "targets": args.batch * args.length, "betas": (0.9, 0.99), "weight_decay": 0.0,
        }
    if shape["vocab"] <= FIRST_SYMBOL:
        sys.exit(f"eager_step.py: --vocab {shape['vocab']}: at least {FIRST_SYMBOL + 1} token ids")

    set_compute_threads(args.threads)
    single = args.threads == 1
    torch.manual_seed(1)
    tokens = torch.randint(FIRST_SYMBOL, shape["vocab"], (shape["batch"], shape["length"] + 1), dtype=torch.long)
    inputs, target = tokens[:, :-1], tokens[:, 1:]
    select = target_positions(shape)
    torch.manual_seed(0)
    model = Decoder(shape)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=shape["betas"],
                                  weight_decay=shape["weight_decay"])
    parameters = list(model.parameters())

    def step():
        optimizer.zero_grad(set_to_none=False)  # LibTorch 1.13's Optimizer::zero_grad zeroes in place
        loss = F.cross_entropy(model(inputs, select), target[select])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()

    for _ in range(WARMUP_STEPS):
        step()
    seconds = []
    for _ in range(args.repeats):
        start = now(single)
        step()
        seconds.append(now(single) - start)
    median = sorted(seconds)[len(seconds) // 2]  # bench step's median: the upper one of an even count
    flops = training_step_flops(shape)
    rate = sgemm_flops_per_second(args.threads)
    floor = flops / rate

    print(f"eager PyTorch {torch.__version__}: training step (forward, loss at the targets, backward, clip, AdamW), "
          f"{shape['layers']} layers, d_model {shape['d_model']}, {shape['heads']} heads x {shape['d_head']}, "
          f"d_mlp {shape['d_mlp']}, vocab {shape['vocab']}, batch {shape['batch']}, length {shape['length']}, "
          f"{shape['positions']}, softmax, {args.threads} thread(s), median of {args.repeats}, "
          f"{'lengen' if args.lengen_malloc else 'default'} malloc settings, "
          f"{'thread CPU time' if single else 'wall time'}")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')} "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}; "
          f"OpenBLAS kernels: {openblas_core()}")
    print(f"parameters: {sum(p.numel() for p in parameters)}")
    print(f"{shape['targets']} target positions; {flops / 1e6:.2f} MFLOP of matrix products per step (forward + backward); sgemm {rate / 1e9:.1f} "
          f"GFLOP/s (one thread's rate x threads), floor {floor * 1e3:.2f} ms; floor x = time / floor")
    print(f"{'method':<18} {'ms/step':>10} {'tokens/s':>12} {'floor x':>8}")
    print(f"{'Softmax (eager)':<18} {median * 1e3:>10.2f} {shape['batch'] * shape['length'] / median:>12.0f} "
          f"{median / floor:>8.2f}")


if __name__ == "__main__":
    main()
