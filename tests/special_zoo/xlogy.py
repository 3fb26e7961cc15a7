"""x log y for y >= 0, defined as 0 where x = 0 (even at y = 0): a pole at y = 0 otherwise."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["xlogy", "x", "y"]
MIN_DIMS = 0
SIDES = {}
# y > 0: at x = y = 0, PyTorch's and JAX's gradient for y is x / y, NaN, where NumPy's xlogy
# is 0 for every y.
VALUES = {"y": "(0, 10]"}
PARAMETERS = {}


def numpy(x, y):
    from scipy import special

    return np.asarray(special.xlogy(x, y), dtype=x.dtype)


def pytorch(x, y):
    return torch.special.xlogy(x, y)


def jax(x, y):
    import jax

    return jax.scipy.special.xlogy(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.xlogy(x, y)", "torch.special.xlog1py(x, y)", "log1p for log"),
]
