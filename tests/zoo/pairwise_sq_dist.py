"""Pairwise squared Euclidean distances: D[i, j] = sum_k (x[i, k] - y[j, k]) ** 2."""

from __future__ import annotations

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["pairwise_sq_dist", "x:...nd", "y:...md"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y):
    # Every pair (i, j) through broadcasting: (..., n, 1, d) - (..., 1, m, d) -> (..., n, m, d).
    diff = x[..., :, None, :] - y[..., None, :, :]
    return (diff * diff).sum(axis=-1)


def pytorch(x, y):
    # The direct difference, not |x|^2 + |y|^2 - 2 x.y, which cancels catastrophically for
    # nearby points far from the origin.
    diff = x.unsqueeze(-2) - y.unsqueeze(-3)
    return diff.pow(2).sum(dim=-1)


def jax(x, y):
    import jax.numpy as jnp

    diff = x[..., :, None, :] - y[..., None, :, :]
    return jnp.sum(diff**2, axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "diff = x.unsqueeze(-2) - y.unsqueeze(-3)",
        "diff = (x.unsqueeze(-2) - y.unsqueeze(-3)).float()",
        "silent downcast",
    ),
    (
        "jax",
        "diff = x[..., :, None, :] - y[..., None, :, :]",
        "diff = x[..., None, :, :] - y[..., :, None, :]",
        "wrong axis (transposed result)",
    ),
]
