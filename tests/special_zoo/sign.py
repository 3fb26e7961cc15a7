"""The sign function, -1, 0 or 1: a jump at zero, and a result of integers."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["sign", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.sign(x))


def pytorch(x):
    return torch.sign(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.sign(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.sign(x)", "torch.tanh(x)", "smooth surrogate left in (tanh for sign)"),
]
