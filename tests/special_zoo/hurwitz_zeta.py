"""The Hurwitz zeta function ζ(s, q) = Σ_n (n + q)^-s: a pole at s = 1, a blow-up q^-s as q -> 0;
defined (as a sum) for s >= 1 and q > 0. PyTorch has no derivative of it."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["hurwitz_zeta", "s", "q", "--no-gradient", "torch.special.zeta has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"s": "[1, 10]", "q": "(0, 10]"}
PARAMETERS = {}
# torch.special.zeta has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")


def numpy(s, q):
    from scipy import special

    return np.asarray(special.zeta(s, q), dtype=s.dtype)


def pytorch(s, q):
    return torch.special.zeta(s, q)


def jax(s, q):
    import jax

    return jax.scipy.special.zeta(s, q)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.zeta(s, q)",
        "torch.special.zeta(s, q + 1)",
        "off by one (the sum from n = 1)",
    ),
]
