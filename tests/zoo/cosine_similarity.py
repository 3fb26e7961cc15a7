"""Cosine similarity along the last axis: x . y / max(|x| |y|, eps)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `python scripts/new_algorithm.py` (name, operands NAME:AXES, --param options).
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

    dot = jnp.sum(x * y, axis=-1)
    norms = jnp.linalg.norm(x, axis=-1) * jnp.linalg.norm(y, axis=-1)
    return dot / jnp.maximum(norms, eps)


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
