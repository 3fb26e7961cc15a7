"""The running log Σ e^x along the last axis (log-space cumulative sum): NumPy's accumulated
logaddexp against PyTorch's and JAX's scans."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["logcumsumexp", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.logaddexp.accumulate(x, axis=-1))


def pytorch(x):
    return torch.logcumsumexp(x, dim=-1)


def jax(x):
    import jax

    return jax.lax.cumlogsumexp(x, axis=x.ndim - 1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.lax.cumlogsumexp(x, axis=x.ndim - 1)",
        "jax.lax.cumlogsumexp(x, axis=x.ndim - 1, reverse=True)",
        "reversed scan (from the end)",
    ),
]
