"""The Bessel function Y0 of the second kind, for x >= 0: a logarithmic pole at 0 (-inf); no JAX port."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_y0", "x", "--no-gradient", "torch.special.bessel_y0 has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 10]"}
PARAMETERS = {}
# torch.special.bessel_y0 has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")
# PyTorch's bessel_y0 is off by up to 2.1e-7 (at x = 5.0) against SciPy in float64.
TOLERANCES = {"float64": (1e-10, 8e-7)}


def numpy(x):
    from scipy import special

    return np.asarray(special.y0(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.bessel_y0(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.bessel_y0(x)", "torch.special.bessel_j0(x)", "wrong kind (J0 for Y0)"),
]
