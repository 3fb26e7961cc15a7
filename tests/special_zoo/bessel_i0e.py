"""The exponentially scaled modified Bessel function e^-|x| I0(x): a kink at 0, decaying like 1/sqrt(2π|x|)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_i0e", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.i0e(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.i0e(x)


def jax(x):
    import jax

    return jax.scipy.special.i0e(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jax.scipy.special.i0e(x)", "jax.scipy.special.i0(x) * jax.numpy.exp(-x)", "missing abs (e^-x for e^-|x|)"),
]
