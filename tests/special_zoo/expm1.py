"""e^x - 1, with expm1: x + x²/2 for tiny x, where exp(x) - 1 loses it; overflow past 709."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["expm1", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.expm1(x))


def pytorch(x):
    return torch.expm1(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.expm1(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.expm1(x)", "jnp.exp(x)", "dropped term (- 1)"),
]
