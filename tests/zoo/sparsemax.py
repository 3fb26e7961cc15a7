"""Sparsemax (Martins and Astudillo, 2016): the Euclidean projection of x onto the simplex along the
last axis, max(x - tau, 0), with tau = (sum of the k largest - 1) / k for the largest k such that
1 + k z_(k) > sum of the k largest (z sorted in decreasing order)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["sparsemax", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    z = -np.sort(-x, axis=-1)
    k = np.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    cumulative = np.cumsum(z, axis=-1)
    size = np.sum(1 + k * z > cumulative, axis=-1, keepdims=True)
    tau = (np.take_along_axis(cumulative, size - 1, axis=-1) - 1) / size.astype(x.dtype)
    return np.maximum(x - tau, 0.0)


def pytorch(x):
    z = torch.sort(x, dim=-1, descending=True).values
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    cumulative = torch.cumsum(z, dim=-1)
    size = (1 + k * z > cumulative).sum(dim=-1, keepdim=True)
    tau = (torch.gather(cumulative, -1, size - 1) - 1) / size.to(x.dtype)
    return torch.clamp(x - tau, min=0.0)


def jax(x):
    import jax.numpy as jnp

    z = -jnp.sort(-x, axis=-1)
    k = jnp.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    cumulative = jnp.cumsum(z, axis=-1)
    size = jnp.sum(1 + k * z > cumulative, axis=-1, keepdims=True)
    tau = (jnp.take_along_axis(cumulative, size - 1, axis=-1) - 1) / size.astype(x.dtype)
    return jnp.maximum(x - tau, 0.0)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "1 + k * z > cumulative", "k * z > cumulative", "wrong support condition"),
    ("jax", "jnp.sort(-x, axis=-1)", "jnp.sort(x, axis=-1)", "sorted the wrong way"),
]
