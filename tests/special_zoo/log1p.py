"""log(1 + x) for x >= -1, with log1p: -inf at -1, x - x²/2 for tiny x, where log(1 + x) loses it."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["log1p", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[-1, 10]"}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.log1p(x))


def pytorch(x):
    return torch.log1p(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.log1p(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.log1p(x)", "jnp.log(x)", "log instead of log1p (the 1 dropped)"),
]
