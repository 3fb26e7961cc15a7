"""The running maximum along the last axis: piecewise the identity, the gradient going to the
element that holds the maximum (ties: a choice)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["cummax", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.maximum.accumulate(x, axis=-1))


def pytorch(x):
    return torch.cummax(x, dim=-1).values


def jax(x):
    import jax

    return jax.lax.cummax(x, axis=x.ndim - 1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.cummax(x, dim=-1)", "torch.cummax(x, dim=0)", "wrong axis"),
]
