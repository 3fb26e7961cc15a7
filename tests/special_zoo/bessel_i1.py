"""The modified Bessel function I1: odd, growing like e^|x|/sqrt(2π|x|), ±inf past |x| = 713."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
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

    # Not jax.scipy.special.i1(x): it multiplies i1e(x) by e^|x|, inf in float32 from 88.7, where
    # I1 (1.9e37 at 89) is not. e^(|x|/2) on each side of the product keeps every factor finite.
    half = jax.numpy.exp(jax.numpy.abs(x) / 2)
    return half * jax.scipy.special.i1e(x) * half


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.numpy.exp(jax.numpy.abs(x) / 2)",
        "jax.numpy.exp(x / 2)",
        "unscaling by e^x for e^|x| (wrong for negative x)",
    ),
]
