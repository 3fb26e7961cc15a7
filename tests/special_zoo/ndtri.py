"""The standard normal quantile Φ⁻¹(p) on [0, 1]: ±inf at 0 and 1, steep near them."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["ndtri", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 1]"}
PARAMETERS = {}
# torch.special.ndtri has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")


def numpy(x):
    from scipy import special

    return np.asarray(special.ndtri(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.ndtri(x)


def jax(x):
    import jax

    return jax.scipy.special.ndtri(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.ndtri(x)",
        "torch.special.erfinv(2 * x - 1)",
        "missing factor sqrt(2) (erfinv for the probit)",
    ),
]
