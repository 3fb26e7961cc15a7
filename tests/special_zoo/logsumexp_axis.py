"""log Σ e^x along the last axis: SciPy's, PyTorch's and JAX's library calls; -inf for an empty
axis, the largest term's gradient where the rest underflow."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["logsumexp_axis", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.logsumexp(x, axis=-1), dtype=x.dtype)


def pytorch(x):
    return torch.logsumexp(x, dim=-1)


def jax(x):
    import jax

    return jax.scipy.special.logsumexp(x, axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.logsumexp(x, axis=-1)",
        "jax.scipy.special.logsumexp(x, axis=-1, keepdims=True)",
        "kept the reduced axis (wrong shape)",
    ),
]
