"""The logistic sigmoid 1/(1 + e^-x): 1 - tiny for large x, underflow for large negative x."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["expit", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.expit(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.expit(x)


def jax(x):
    import jax

    return jax.scipy.special.expit(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.expit(x)", "1 / (1 + torch.exp(x))", "sign of the exponent"),
]
