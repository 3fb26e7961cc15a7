"""sqrt(x² + y²) without overflow or underflow: a cone point at the origin (no derivative there)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["hypot", "x", "y"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y):
    return np.asarray(np.hypot(x, y))


def pytorch(x, y):
    return torch.hypot(x, y)


def jax(x, y):
    import jax.numpy as jnp

    return jnp.hypot(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.hypot(x, y)", "x * x + y * y", "missing square root"),
]
