"""The ceiling: a whole number, a jump at each integer, -0 on (-1, 0)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["ceil", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.ceil(x))


def pytorch(x):
    return torch.ceil(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.ceil(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.ceil(x)", "jnp.round(x)", "wrong rounding (to nearest)"),
]
