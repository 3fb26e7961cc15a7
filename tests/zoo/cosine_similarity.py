"""Cosine similarity along the last axis: x . y / max(|x| |y|, eps)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["cosine_similarity", "x:...d", "y:...d", "--param", "eps: float = 1e-8"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y, eps):
    dot = (x * y).sum(axis=-1)
    norms = np.sqrt((x * x).sum(axis=-1)) * np.sqrt((y * y).sum(axis=-1))
    return np.asarray(dot / np.maximum(norms, eps))


def pytorch(x, y, eps):
    dot = (x * y).sum(dim=-1)
    norms = torch.linalg.vector_norm(x, dim=-1) * torch.linalg.vector_norm(y, dim=-1)
    return dot / norms.clamp(min=eps)


def jax(x, y, eps):
    import jax.numpy as jnp

    # The norms through the squares, clamped before the square root: jnp.linalg.norm's gradient
    # at a zero vector is NaN, and so was this port's, wherever x or y was zero (the harness found
    # it; PyTorch's vector_norm gives 0 there).
    dot = jnp.sum(x * y, axis=-1)
    squares = jnp.sum(x * x, axis=-1) * jnp.sum(y * y, axis=-1)
    return dot / jnp.sqrt(jnp.maximum(squares, eps**2))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "dot / norms.clamp(min=eps)",
        "dot / norms.detach().clamp(min=eps)",
        "detached operand",
    ),
    ("jax", "jnp.sum(x * y, axis=-1)", "jnp.sum(x * y, axis=0)", "wrong axis"),
]
