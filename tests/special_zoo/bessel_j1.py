"""The Bessel function J1 of the first kind: odd, oscillating. No JAX port: JAX's bessel_jn is
nan at 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_j1", "x", "--no-gradient", "torch.special.bessel_j1 has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.bessel_j1 has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")
# PyTorch's bessel_j1 is off by up to 4.7e-7 (at x = -5.0) against SciPy in float64.
TOLERANCES = {"float64": (1e-10, 2e-6)}


def numpy(x):
    from scipy import special

    return np.asarray(special.j1(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.bessel_j1(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.bessel_j1(x)", "torch.special.bessel_j1(x.abs())", "lost the odd symmetry (J1 of |x|)"),
]
