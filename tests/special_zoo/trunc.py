"""Rounding toward zero: a whole number, a jump at each nonzero integer, -0 on (-1, 0)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["trunc", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.trunc(x))


def pytorch(x):
    return torch.trunc(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.trunc(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.trunc(x)", "x.trunc_()", "in-place change of an input"),
]
