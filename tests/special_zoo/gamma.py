"""The gamma function Γ(x): poles at 0, -1, -2, ..., negative on (-1, 0), (-3, -2), ...; PyTorch has
no gamma, so its port is exp(lgamma(x)) with the sign put back."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["gamma", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.gamma(x), dtype=x.dtype)


def pytorch(x):
    magnitude = torch.lgamma(x).exp()
    # Γ is negative where floor(x) is odd below zero, and at -0 (the right end of (-1, 0)).
    negative = ((x < 0) & (torch.floor(x) % 2 == 1)) | ((x == 0) & torch.signbit(x))
    signed = torch.where(negative, -magnitude, magnitude)
    # No limit at a negative integer (+inf on one side, -inf on the other): nan, as in SciPy.
    return torch.where((x < 0) & (x == torch.floor(x)), torch.nan, signed)


def jax(x):
    import jax

    return jax.scipy.special.gamma(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "signed = torch.where(negative, -magnitude, magnitude)",
        "signed = magnitude",
        "missing sign (|Γ(x)| for negative x)",
    ),
]
