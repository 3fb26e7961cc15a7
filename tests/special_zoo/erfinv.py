"""The inverse error function on [-1, 1]: ±inf at ±1, steep near them."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["erfinv", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[-1, 1]"}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.erfinv(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.erfinv(x)


def jax(x):
    import jax

    return jax.scipy.special.erfinv(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.erfinv(x)",
        "jax.scipy.special.ndtri(x)",
        "probit for erfinv (a different scale and domain)",
    ),
]
