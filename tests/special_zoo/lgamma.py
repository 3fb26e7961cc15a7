"""log |Γ(x)|: +inf at the poles 0, -1, -2, ..., zeros at 1 and 2 (relative accuracy near them)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["lgamma", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.gammaln(x), dtype=x.dtype)


def pytorch(x):
    return torch.lgamma(x)


def jax(x):
    import jax

    return jax.scipy.special.gammaln(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.gammaln(x)",
        "jax.numpy.log(jax.scipy.special.gamma(x))",
        "missing abs (log of a negative Γ), overflow",
    ),
]
