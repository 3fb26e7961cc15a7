"""copysign(x, y): |x| with the sign bit of y, a jump at y = 0 that the sign of the zero decides."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["copysign", "x", "y"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y):
    return np.asarray(np.copysign(x, y))


def pytorch(x, y):
    return torch.copysign(x, y)


def jax(x, y):
    import jax.numpy as jnp

    return jnp.copysign(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.copysign(x, y)", "torch.copysign(y, x)", "arguments swapped"),
]
