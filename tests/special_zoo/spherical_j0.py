"""The spherical Bessel function j0(x) = sin(x)/x: a removable singularity at 0; no JAX port."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["spherical_j0", "x", "--no-gradient", "torch.special.spherical_bessel_j0 has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.spherical_bessel_j0 has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")


def numpy(x):
    from scipy import special

    return np.asarray(special.spherical_jn(0, x), dtype=x.dtype)


def pytorch(x):
    return torch.special.spherical_bessel_j0(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.spherical_bessel_j0(x)", "torch.sinc(x)", "normalised sinc, sin(πx)/(πx), for sin(x)/x"),
]
