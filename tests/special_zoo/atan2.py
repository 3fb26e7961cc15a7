"""atan2(y, x), the angle of the point (x, y) in (-π, π]: a branch cut along the negative x axis,
where the sign of a zero y picks π or -π, and a jump at the origin."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["atan2", "y", "x"]
MIN_DIMS = 0
SIDES = {}
# No magnitude below 1e-150 but 0: both libraries' gradients divide by x² + y², which underflows
# there (PyTorch's is inf at y = 0, x = 2.1e-160, where the slope is 4.7e159; JAX's NaN at
# x = 3.3e-175, where it is 0).
VALUES = {name: "[-10, -1e-150] | [0, 0] | [1e-150, 10]" for name in ("y", "x")}
PARAMETERS = {}


def numpy(y, x):
    return np.asarray(np.arctan2(y, x))


def pytorch(y, x):
    return torch.atan2(y, x)


def jax(y, x):
    import jax.numpy as jnp

    return jnp.arctan2(y, x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.arctan2(y, x)", "jnp.arctan(y / x)", "wrong branch (arctan of the ratio)"),
]
