"""The Euclidean norm along the last axis, scaled against overflow by the libraries: a cone point
at the zero vector (no derivative there)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["vector_norm", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.linalg.norm(x, axis=-1))


def pytorch(x):
    return torch.linalg.vector_norm(x, dim=-1)


def jax(x):
    import jax.numpy as jnp

    return jnp.linalg.norm(x, axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jnp.linalg.norm(x, axis=-1)", "jnp.linalg.norm(x, ord=1, axis=-1)", "wrong norm (L1 for L2)"),
]
