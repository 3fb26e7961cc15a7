"""The tangent: poles at π/2 + kπ, which no float hits, so values near them are huge and steep."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["tan", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.tan(x))


def pytorch(x):
    return torch.tan(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.tan(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.tan(x)", "torch.tanh(x)", "wrong function (tanh for tan)"),
]
