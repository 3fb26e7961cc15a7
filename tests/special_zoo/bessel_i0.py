"""The modified Bessel function I0: even, growing like e^|x|/sqrt(2π|x|), inf past x = 713. No JAX
port: the gradient of jax.scipy.special.i0 at 0 is 1, not I1(0) = 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_i0", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.i0(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.i0(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.i0(x)", "torch.special.i0e(x)", "scaled for unscaled (e^-|x| I0)"),
]
