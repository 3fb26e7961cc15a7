"""Fourier features of a scalar input: [sin(2 pi f x), cos(2 pi f x)] for each frequency f."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["fourier_features", "x:...", "frequencies:f"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, frequencies):
    angles = 2 * np.pi * x[..., None] * frequencies  # (..., f)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)


def pytorch(x, frequencies):
    angles = 2 * torch.pi * x.unsqueeze(-1) * frequencies
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


def jax(x, frequencies):
    import jax.numpy as jnp

    angles = 2 * jnp.pi * x[..., None] * frequencies
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "x.unsqueeze(-1) * frequencies",
        "x.unsqueeze(-1).detach() * frequencies",
        "detached operand",
    ),
    ("jax", "2 * jnp.pi * x[..., None]", "jnp.pi * x[..., None]", "wrong constant (pi for 2 pi)"),
]
