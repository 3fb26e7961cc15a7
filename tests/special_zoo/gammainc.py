"""The regularised lower incomplete gamma function P(a, x), for x >= 0: 0 at 0, tending to 1, with
a root singularity x^a at 0 for a < 1."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["gammainc", "x", "--param", "a: float = 2.0"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 10]"}
PARAMETERS = {"a": "st.floats(0.5, 5.0)"}


def numpy(x, a):
    from scipy import special

    return np.asarray(special.gammainc(a, x), dtype=x.dtype)


def pytorch(x, a):
    return torch.special.gammainc(torch.full_like(x, a), x)


def jax(x, a):
    import jax

    return jax.scipy.special.gammainc(a, x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.gammainc(a, x)",
        "jax.scipy.special.gammaincc(a, x)",
        "upper for lower (Q(a, x) for P(a, x))",
    ),
]
