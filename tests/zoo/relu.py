"""ReLU: max(x, 0), elementwise."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["relu", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.maximum(x, 0))


def pytorch(x):
    return torch.relu(x)


def jax(x):
    import jax

    return jax.nn.relu(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.relu(x)", "torch.relu_(x)", "in-place change of an input"),
    ("jax", "jax.nn.relu(x)", "jax.nn.relu(x.astype(jax.numpy.float32))", "silent downcast"),
]
