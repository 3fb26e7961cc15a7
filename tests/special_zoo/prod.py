"""The product along the last axis: overflow and underflow for long rows, zeros whose gradient is
the product of the others."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["prod", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.prod(x, axis=-1))


def pytorch(x):
    return torch.prod(x, dim=-1)


def jax(x):
    import jax.numpy as jnp

    return jnp.prod(x, axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.prod(x, dim=-1)",
        "torch.exp(torch.log(x).sum(dim=-1))",
        "log-space product (nan for negative entries)",
    ),
]
