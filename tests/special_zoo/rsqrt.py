"""The reciprocal square root 1/sqrt(x), for x >= 0: a pole at zero (-inf at -0)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["rsqrt", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 10]"}
PARAMETERS = {}


def numpy(x):
    return np.asarray(1.0 / np.sqrt(x))


def pytorch(x):
    return torch.rsqrt(x)


def jax(x):
    import jax

    return jax.lax.rsqrt(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.rsqrt(x)", "torch.rsqrt(x + 1e-8)", "an epsilon for stability (shifts every value)"),
]
