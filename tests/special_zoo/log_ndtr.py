"""The log of the standard normal CDF: about -x²/2 for large negative x, tiny -Φ(-x) for large positive x."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["log_ndtr", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.log_ndtr has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")


def numpy(x):
    from scipy import special

    return np.asarray(special.log_ndtr(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.log_ndtr(x)


def jax(x):
    import jax

    return jax.scipy.special.log_ndtr(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "jax.scipy.special.log_ndtr(x)", "jax.nn.log_sigmoid(x)", "logistic approximation for the normal CDF"),
]
