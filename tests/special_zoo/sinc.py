"""The normalised sinc sin(πx)/(πx): a removable singularity at 0 (1 there), zeros at the integers.
No JAX port: the gradient of jnp.sinc is -inf for x from 1e-307 to 1e-200 (where it is about 0)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["sinc", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.sinc(x))


def pytorch(x):
    return torch.sinc(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.sinc(x)", "torch.sin(x) / x", "unnormalised, and nan at 0"),
]
