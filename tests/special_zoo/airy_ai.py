"""The Airy function Ai: oscillating for x < 0, decaying like e^(-2/3 x^1.5) for x > 0; no JAX port."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["airy_ai", "x", "--no-gradient", "torch.special.airy_ai has no derivative"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.airy_ai has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")
# PyTorch's airy_ai is off by up to 3.0e-6 (at x = -2.09) against SciPy, in float64 and float32.
TOLERANCES = {"float64": (1e-10, 1.2e-5), "float32": (1e-5, 1.2e-5)}


def numpy(x):
    from scipy import special

    return np.asarray(special.airy(x)[0], dtype=x.dtype)


def pytorch(x):
    return torch.special.airy_ai(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.airy_ai(x)", "torch.special.airy_ai(-x)", "sign of the argument"),
]
