"""The inverse hyperbolic tangent on [-1, 1]: infinite at ±1, its derivative 1/(1 - x²) too."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["arctanh", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[-1, 1]"}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.arctanh(x))


def pytorch(x):
    return torch.atanh(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.arctanh(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.arctanh(x)", "jnp.log1p(x) - jnp.log1p(-x)", "missing factor 1/2"),
]
