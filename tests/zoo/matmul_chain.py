"""A chain of matrix products, as in a deep linear network: y = x @ w1 @ w2."""

from __future__ import annotations

import numpy as np

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["matmul_chain", "x:...a", "w1:ab", "w2:bc"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, w1, w2):
    return np.asarray(x @ w1 @ w2)


def pytorch(x, w1, w2):
    return x @ w1 @ w2


def jax(x, w1, w2):
    import jax.numpy as jnp

    return jnp.matmul(jnp.matmul(x, w1), w2)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "x @ w1 @ w2", "x @ w1.detach() @ w2", "detached operand"),
    ("jax", "jnp.matmul(x, w1)", "jnp.matmul(x, w1).astype(jnp.float32)", "silent downcast"),
]
