"""Linear interpolation on a uniform grid (1-D grid_sample, align_corners=True):
y = (1 - w) v_l + w v_(l+1), at t = position * (n - 1), l = floor(t), w = t - l."""

from __future__ import annotations

import numpy as np

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["grid_interp", "values:...n", "positions:...m"]
MIN_DIMS = 0
SIDES = {}
# Positions are normalised to the grid: 0 is the first value, 1 the last.
VALUES = {"positions": (0.0, 1.0)}
PARAMETERS = {}


def numpy(values, positions):
    n = values.shape[-1]
    t = positions * (n - 1)
    left = np.clip(np.floor(t).astype(np.int64), 0, max(n - 2, 0))
    right = np.minimum(left + 1, n - 1)
    w = t - left.astype(t.dtype)
    return np.take_along_axis(values, left, -1) * (1 - w) + np.take_along_axis(values, right, -1) * w


def pytorch(values, positions):
    n = values.shape[-1]
    t = positions * (n - 1)
    left = t.floor().long().clamp(0, max(n - 2, 0))
    right = (left + 1).clamp(max=n - 1)
    w = t - left
    return values.gather(-1, left) * (1 - w) + values.gather(-1, right) * w


def jax(values, positions):
    import jax.numpy as jnp

    n = values.shape[-1]
    t = positions * (n - 1)
    left = jnp.clip(jnp.floor(t).astype(jnp.int32), 0, max(n - 2, 0))
    right = jnp.minimum(left + 1, n - 1)
    w = t - left
    return jnp.take_along_axis(values, left, -1) * (1 - w) + jnp.take_along_axis(values, right, -1) * w


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "t.floor().long()", "t.round().long()", "wrong rounding (nearest instead of floor)"),
    ("pytorch", "w = t - left", "w = (t - left).detach()", "detached operand"),
    ("jax", "t = positions * (n - 1)", "t = positions * n", "wrong constant (align_corners=False scale)"),
]
