"""The Heaviside step: 0 below zero, 1 above, h0 at zero (either sign of it); PyTorch's has no
derivative."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["heaviside", "x", "h0", "--no-gradient", "torch.heaviside has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, h0):
    return np.asarray(np.heaviside(x, h0))


def pytorch(x, h0):
    return torch.heaviside(x, h0)


def jax(x, h0):
    import jax.numpy as jnp

    return jnp.heaviside(x, h0)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.heaviside(x, h0)", "jnp.where(x > 0, 1.0, h0)", "wrong branch (h0 below zero too)"),
]
