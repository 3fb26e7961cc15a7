"""Layer normalisation without affine parameters: y = (x - mean) / sqrt(var + eps), last axis."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["layer_norm", "x:...d", "--param", "eps: float = 1e-5"]
MIN_DIMS = 0
# Mean and variance of an empty feature axis are undefined.
SIDES = {"d": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(x, eps):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased, as in the paper
    return (x - mean) / np.sqrt(variance + eps)


def pytorch(x, eps):
    centered = x - x.mean(dim=-1, keepdim=True)
    variance = centered.pow(2).mean(dim=-1, keepdim=True)
    return centered * torch.rsqrt(variance + eps)


def jax(x, eps):
    import jax
    import jax.numpy as jnp

    mean = jnp.mean(x, axis=-1, keepdims=True)
    variance = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(variance + eps)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "centered = x - x.mean(dim=-1, keepdim=True)",
        "x -= x.mean(dim=-1, keepdim=True)\n    centered = x",
        "in-place change of an input",
    ),
    (
        "jax",
        "jnp.var(x, axis=-1, keepdims=True)",
        "jnp.var(x, axis=-1, keepdims=True, ddof=1)",
        "wrong constant (unbiased variance)",
    ),
    (
        "pytorch",
        "centered = x - x.mean(dim=-1, keepdim=True)",
        "rows = x.view(-1, x.shape[-1])  # one row per feature vector\n"
        "    centered = (rows - rows.mean(dim=-1, keepdim=True)).view(x.shape)",
        "view instead of reshape (raises on a transposed x)",
    ),
]
