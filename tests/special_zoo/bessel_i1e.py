"""The exponentially scaled modified Bessel function e^-|x| I1(x): odd, a kink in its derivative at 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_i1e", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.i1e(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.i1e(x)


def jax(x):
    import jax

    return jax.scipy.special.i1e(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.i1e(x)", "torch.special.i1e(x.detach())", "a detach (no gradient through x)"),
]
