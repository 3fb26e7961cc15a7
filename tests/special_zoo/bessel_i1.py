"""The modified Bessel function I1: odd, growing like e^|x|/sqrt(2π|x|), ±inf past |x| = 713."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `python scripts/new_algorithm.py` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_i1", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.i1(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.i1(x)


def jax(x):
    import jax

    return jax.scipy.special.i1(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.i1(x)",
        "jax.scipy.special.i1e(x) * jax.numpy.exp(x)",
        "unscaling by e^x for e^|x| (wrong for negative x)",
    ),
]
