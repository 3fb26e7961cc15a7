"""Rounding to a number of decimals, halves to even: a jump at each multiple of 10^-decimals plus a
half, where the scaling by 10^decimals rounds first in every library."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["round_decimals", "x", "--param", "decimals: int = 2"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {"decimals": "st.integers(0, 3)"}


def numpy(x, decimals):
    return np.asarray(np.round(x, decimals))


def pytorch(x, decimals):
    return torch.round(x, decimals=decimals)


def jax(x, decimals):
    import jax.numpy as jnp

    return jnp.round(x, decimals)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.round(x, decimals)", "jnp.round(x)", "dropped argument (decimals)"),
]
