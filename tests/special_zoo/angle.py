"""The phase of a real number, 0 or π: a jump at zero, where NumPy and JAX give π for -0 and
PyTorch gives 0. No JAX port: jax.grad of jnp.angle is NaN at a tiny positive x (3.3e-175: x²
underflows in atan2's derivative), where the slope is 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["angle", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.angle(x))


def pytorch(x):
    return torch.angle(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.angle(x)", "torch.rad2deg(torch.angle(x))", "degrees for radians"),
]
