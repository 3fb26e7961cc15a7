"""Rotary position embedding (RoFormer), interleaved pairs: (x_2i, x_2i+1) at position p turns by
the angle p * base^(-2i/d)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["rotary_embedding", "x:...td", "--size", "d: even", "--param", "base: float = 10000.0"]
MIN_DIMS = 0
# The features come in pairs: d is even.
SIDES = {"d": (2, 8)}
VALUES = {}
PARAMETERS = {"base": "st.floats(2.0, 1e4)"}


def numpy(x, base):
    t, d = x.shape[-2], x.shape[-1]
    angles = np.arange(t)[:, None] * base ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angles), np.sin(angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


def pytorch(x, base):
    t, d = x.shape[-2], x.shape[-1]
    freqs = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = (torch.arange(t, dtype=torch.float64)[:, None] * freqs).to(x.device)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def jax(x, base):
    import jax.numpy as jnp

    t, d = x.shape[-2], x.shape[-1]
    angles = jnp.arange(t)[:, None] * base ** (-jnp.arange(0, d, 2) / d)
    cos, sin = jnp.cos(angles).astype(x.dtype), jnp.sin(angles).astype(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return jnp.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), axis=-1).reshape(x.shape)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "x1, x2 = x[..., 0::2], x[..., 1::2]",
        "x1, x2 = x[..., : d // 2], x[..., d // 2 :]",
        "wrong convention (halves instead of interleaved pairs)",
    ),
    ("jax", "x1 * sin + x2 * cos", "x2 * cos - x1 * sin", "wrong sign (turns the other way)"),
]
