"""Soft thresholding (the proximal operator of the L1 norm): sign(x) max(|x| - threshold, 0)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["soft_threshold", "x", "--param", "threshold: float = 1.0"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, threshold):
    return np.asarray(np.sign(x) * np.maximum(np.abs(x) - threshold, 0.0))


def pytorch(x, threshold):
    return torch.sign(x) * torch.clamp(x.abs() - threshold, min=0)


def jax(x, threshold):
    import jax.numpy as jnp

    return jnp.sign(x) * jnp.maximum(jnp.abs(x) - threshold, 0.0)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "x.abs() - threshold", "x - threshold", "dropped term (abs)"),
    ("jax", "jnp.sign(x) * ", "", "dropped term (sign)"),
]
