"""RMSNorm: y = x / sqrt(mean(x**2, last axis) + eps) * weight."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["rms_norm", "x:...d", "weight:d", "--param", "eps: float = 1e-6"]
MIN_DIMS = 0
# The mean over an empty feature axis is undefined.
SIDES = {"d": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(x, weight, eps):
    mean_square = np.mean(x**2, axis=-1, keepdims=True)
    return x / np.sqrt(mean_square + eps) * weight


def pytorch(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


def jax(x, weight, eps):
    import jax
    import jax.numpy as jnp

    mean_square = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(mean_square + eps) * weight


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "x.pow(2).mean(dim=-1, keepdim=True)",
        "x.pow(2).mean(dim=0, keepdim=True)",
        "wrong axis",
    ),
    # The upcast of LLaMA-style code, `x.float()`, is a downcast for float64 input.
    ("pytorch", "x.pow(2)", "x.float().pow(2)", "silent downcast"),
    # Gemma's RMSNorm scales by (1 + weight): a different convention, easy to carry over.
    ("jax", "* weight", "* (1 + weight)", "wrong convention (1 + weight)"),
]
