"""The modified Bessel function K0, for x >= 0: a logarithmic pole at 0 (+inf), decaying like e^-x; no JAX port."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_k0", "x", "--no-gradient", "torch.special.modified_bessel_k0 has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 10]"}
PARAMETERS = {}
# torch.special.modified_bessel_k0 has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")


def numpy(x):
    from scipy import special

    return np.asarray(special.k0(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.modified_bessel_k0(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.modified_bessel_k0(x)",
        "torch.special.scaled_modified_bessel_k0(x)",
        "scaled for unscaled (e^x K0)",
    ),
]
