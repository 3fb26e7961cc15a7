"""Sum of squares along one axis: s = sum_i x_i ** 2."""

from __future__ import annotations

import numpy as np

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["sum_of_squares", "x", "--param", "axis: int = -1"]
MIN_DIMS = 1
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, axis):
    return np.asarray(np.sum(x**2, axis=axis))


def pytorch(x, axis):
    return x.square().sum(dim=axis)


def jax(x, axis):
    import jax.numpy as jnp

    return jnp.sum(jnp.square(x), axis=axis)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "x.square().sum(dim=axis)", "x.square().sum(dim=-1)", "wrong axis"),
    ("jax", "jnp.square(x)", "jnp.square(x.astype(jnp.float32))", "silent downcast"),
]
