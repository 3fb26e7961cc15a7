"""Trimmed mean along the last axis: sort, drop the `trim` smallest and largest values, average the rest."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["trimmed_mean", "x:...n", "--param", "trim: int = 1"]
MIN_DIMS = 0
# The default trim=1 leaves a value from n = 3 on.
SIDES = {"n": (3, 8)}
VALUES = {}
# At least one value is left: 2 * trim < n.
PARAMETERS = {"trim": "st.integers(0, (x.shape[-1] - 1) // 2)"}


def numpy(x, trim):
    n = x.shape[-1]
    return np.asarray(np.sort(x, axis=-1)[..., trim : n - trim].mean(axis=-1))


def pytorch(x, trim):
    n = x.shape[-1]
    return torch.sort(x, dim=-1).values[..., trim : n - trim].mean(dim=-1)


def jax(x, trim):
    import jax.numpy as jnp

    n = x.shape[-1]
    return jnp.sort(x, axis=-1)[..., trim : n - trim].mean(axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "[..., trim : n - trim]", "[..., trim:-trim]", "empty slice at trim=0"),
    (
        "jax",
        "jnp.sort(x, axis=-1)[..., trim : n - trim].mean(axis=-1)",
        "jnp.sort(x, axis=-1)[..., trim : n - trim].sum(axis=-1) / n",
        "wrong count (divides by n)",
    ),
]
