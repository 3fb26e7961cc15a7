"""The remainder x mod y with the sign of y (Python's %): jumps where x/y crosses an integer, nan
for y = 0, and a zero result whose sign is y's in NumPy."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["remainder", "x", "y"]
MIN_DIMS = 0
SIDES = {}
# Divisors away from 0: PyTorch's remainder is NaN where x / y overflows (x = 1e4, y = 2e-306),
# NumPy's exact there.
VALUES = {"y": "[-10, -0.01] | [0.01, 10]"}
PARAMETERS = {}


def numpy(x, y):
    return np.asarray(np.remainder(x, y))


def pytorch(x, y):
    return torch.remainder(x, y)


def jax(x, y):
    import jax.numpy as jnp

    return jnp.remainder(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.remainder(x, y)", "torch.fmod(x, y)", "fmod for remainder (sign of x, not y)"),
]
