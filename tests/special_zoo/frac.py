"""The fractional part x - trunc(x), with the sign of x: a jump at each nonzero integer."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["frac", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.modf(x)[0])


def pytorch(x):
    return torch.frac(x)


def jax(x):
    import jax.numpy as jnp

    return x - jnp.trunc(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.frac(x)", "x - torch.floor(x)", "floor for trunc (wrong for negative x)"),
]
