"""1-D Wasserstein distance of two samples of one size: W1(u, v) = mean_i |u_(i) - v_(i)|, the
samples sorted (the optimal transport plan between two empirical measures on the line)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["wasserstein_1d", "u:...n", "v:...n"]
MIN_DIMS = 0
SIDES = {}
# Draws in few distinct values: ties within a sample and across samples, where kinks meet.
VALUES = {"u": (-2.0, 2.0), "v": (-2.0, 2.0)}
PARAMETERS = {}


def numpy(u, v):
    return np.asarray(np.mean(np.abs(np.sort(u, axis=-1) - np.sort(v, axis=-1)), axis=-1))


def pytorch(u, v):
    return (torch.sort(u, dim=-1).values - torch.sort(v, dim=-1).values).abs().mean(dim=-1)


def jax(u, v):
    import jax.numpy as jnp

    return jnp.mean(jnp.abs(jnp.sort(u, axis=-1) - jnp.sort(v, axis=-1)), axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.sort(v, dim=-1).values", "v", "v left unsorted"),
    ("jax", "jnp.mean(", "jnp.sum(", "sum for mean"),
]
