"""x log(1 + y) for y >= -1, defined as 0 where x = 0: a pole at y = -1, log1p's accuracy near 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["xlog1py", "x", "y"]
MIN_DIMS = 0
SIDES = {}
# y > -1: at x = 0, y = -1, JAX's gradient for y is x / (1 + y), NaN, where SciPy's xlog1py is 0
# for every y.
VALUES = {"y": "(-1, 10]"}
PARAMETERS = {}


def numpy(x, y):
    from scipy import special

    return np.asarray(special.xlog1py(x, y), dtype=x.dtype)


def pytorch(x, y):
    return torch.special.xlog1py(x, y)


def jax(x, y):
    import jax

    return jax.scipy.special.xlog1py(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.xlog1py(x, y)",
        "jax.scipy.special.xlogy(x, y)",
        "log for log1p (the 1 dropped)",
    ),
]
