"""The reciprocal 1/x: a pole at zero, whose sign follows the sign of the zero (1/-0 = -inf)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["reciprocal", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(1.0 / x)


def pytorch(x):
    return torch.reciprocal(x)


def jax(x):
    import jax.numpy as jnp

    return jnp.reciprocal(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.reciprocal(x)", "torch.reciprocal(x.float()).to(x.dtype)", "float32 downcast"),
]
