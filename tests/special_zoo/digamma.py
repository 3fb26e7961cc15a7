"""The digamma function ψ(x) = Γ'(x)/Γ(x): poles at 0, -1, -2, ..., the sign of the infinity set by
the side (ψ(-0) = +inf, ψ(+0) = -inf in SciPy and PyTorch). No JAX port: JAX's digamma is nan at
±0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["digamma", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.digamma(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.digamma(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.digamma(x)",
        "torch.special.digamma(x + 1)",
        "off by one (ψ(x + 1), the harmonic-number convention)",
    ),
]
