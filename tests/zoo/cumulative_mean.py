"""Running mean along the last axis: y_i = (x_1 + ... + x_i) / i."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["cumulative_mean", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    counts = np.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    return np.cumsum(x, axis=-1) / counts


def pytorch(x):
    counts = torch.arange(1, x.shape[-1] + 1, device=x.device)
    return x.cumsum(dim=-1) / counts


def jax(x):
    import jax.numpy as jnp

    return jnp.cumsum(x, axis=-1) / jnp.arange(1, x.shape[-1] + 1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "x.cumsum(dim=-1)", "x.cumsum(dim=0)", "wrong axis"),
    (
        "jax",
        "jnp.arange(1, x.shape[-1] + 1)",
        "jnp.arange(x.shape[-1]) + 2",
        "wrong constant (off by one)",
    ),
]
