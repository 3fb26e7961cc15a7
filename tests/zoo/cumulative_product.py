"""Cumulative product along the last axis: y_i = prod_(j <= i) x_j."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["cumulative_product", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.cumprod(x, axis=-1)


def pytorch(x):
    return torch.cumprod(x, dim=-1)


def jax(x):
    import jax.numpy as jnp

    return jnp.cumprod(x, axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.cumprod(x, dim=-1)",
        "torch.cumsum(x.abs().log(), dim=-1).exp() * torch.cumprod(x.sign(), dim=-1)",
        "log-space trick (nan gradient at zeros)",
    ),
    ("jax", "jnp.cumprod(x, axis=-1)", "jnp.cumprod(x[..., ::-1], axis=-1)[..., ::-1]", "wrong direction"),
]
