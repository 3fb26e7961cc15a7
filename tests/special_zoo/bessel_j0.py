"""The Bessel function J0 of the first kind: oscillating, slowly decaying. No JAX port: JAX's
bessel_jn is nan at 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["bessel_j0", "x", "--no-gradient", "torch.special.bessel_j0 has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.bessel_j0 has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")
# PyTorch's bessel_j0 is off by up to 3.8e-7 (at x = 5.0) against SciPy in float64.
TOLERANCES = {"float64": (1e-10, 1.5e-6)}


def numpy(x):
    from scipy import special

    return np.asarray(special.j0(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.bessel_j0(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.bessel_j0(x)",
        "torch.special.bessel_j0(x.float())",
        "float32 downcast (the result left in float32)",
    ),
]
