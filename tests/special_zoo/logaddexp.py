"""log(e^x + e^y) without overflow: a kink-like bend where x = y, exact max(x, y) far from it."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["logaddexp", "x", "y"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y):
    return np.asarray(np.logaddexp(x, y))


def pytorch(x, y):
    return torch.logaddexp(x, y)


def jax(x, y):
    import jax.numpy as jnp

    return jnp.logaddexp(x, y)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.logaddexp(x, y)", "torch.logaddexp2(x, y)", "wrong base (2 for e)"),
]
