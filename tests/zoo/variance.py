"""Variance along an axis with a delta degrees of freedom: sum (x - mean)^2 / (n - ddof)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["variance", "x", "--param", "axis: int = -1", "--param", "ddof: int = 0"]
MIN_DIMS = 1
SIDES = {}
VALUES = {}
PARAMETERS = {"ddof": "st.integers(0, max(x.shape[axis] - 1, 0))"}


def numpy(x, axis, ddof):
    n = x.shape[axis]
    if n - ddof <= 0:
        msg = f"variance() needs more than ddof={ddof} values along axis {axis}"
        raise ValueError(msg)
    mean = x.mean(axis=axis, keepdims=True)
    return np.asarray(((x - mean) ** 2).sum(axis=axis) / (n - ddof))


def pytorch(x, axis, ddof):
    if x.shape[axis] - ddof <= 0:
        msg = f"variance() needs more than ddof={ddof} values along axis {axis}"
        raise ValueError(msg)
    return torch.var(x, dim=axis, correction=ddof)


def jax(x, axis, ddof):
    import jax.numpy as jnp

    if x.shape[axis] - ddof <= 0:
        msg = f"variance() needs more than ddof={ddof} values along axis {axis}"
        raise ValueError(msg)
    return jnp.var(x, axis=axis, ddof=ddof)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.var(x, dim=axis, correction=ddof)",
        "torch.var(x.detach(), dim=axis, correction=ddof)",
        "detached operand",
    ),
    ("jax", "jnp.var(x, axis=axis, ddof=ddof)", "jnp.var(x, axis=axis)", "dropped term (ddof)"),
]
