"""log |x|: a pole at zero from both sides (-inf at +0 and at -0)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["log_abs", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.log(np.abs(x)))


def pytorch(x):
    return torch.log(torch.abs(x))


def jax(x):
    import jax.numpy as jnp

    return jnp.log(jnp.abs(x))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.log(jnp.abs(x))", "jnp.log(x)", "missing abs (nan for negative x)"),
]
