"""The floor: a whole number, a jump at each integer, a zero derivative elsewhere."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["floor", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.floor(x))


def pytorch(x):
    return torch.floor(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.floor(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.floor(x)", "torch.trunc(x)", "trunc for floor (wrong for negative x)"),
]
