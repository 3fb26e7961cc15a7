"""The C remainder fmod(x, y) with the sign of x: jumps where x/y crosses a nonzero integer, nan for
y = 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["fmod", "x", "y"]
MIN_DIMS = 0
SIDES = {}
# Divisors away from 0: PyTorch's fmod is NaN where x / y overflows (x = 1e4, y = 2e-306),
# NumPy's exact there.
VALUES = {"y": "[-10, -0.01] | [0.01, 10]"}
PARAMETERS = {}


def numpy(x, y):
    return np.asarray(np.fmod(x, y))


def pytorch(x, y):
    return torch.fmod(x, y)


def jax(x, y):
    import jax.numpy as jnp

    return jnp.fmod(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.fmod(x, y)", "jnp.remainder(x, y)", "remainder for fmod (sign of y, not x)"),
]
