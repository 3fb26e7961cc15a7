"""Floor division x // y: whole numbers, jumps wherever x/y crosses an integer, ±inf or nan for
y = 0; PyTorch's has no derivative."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["floor_divide", "x", "y", "--no-gradient", "torch.floor_divide has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y):
    return np.asarray(np.floor_divide(x, y))


def pytorch(x, y):
    return torch.floor_divide(x, y)


def jax(x, y):
    import jax.numpy as jnp

    return jnp.floor_divide(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.floor_divide(x, y)",
        'torch.div(x, y, rounding_mode="trunc")',
        "truncating division for floor division",
    ),
]
