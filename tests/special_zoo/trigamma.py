"""The trigamma function ψ'(x) = polygamma(1, x): double poles at 0, -1, -2, ... (+inf from either
side), reflected below zero in the reference and the port. No JAX port:
jax.scipy.special.polygamma(1, x) is wrong below x = -7 (-9.6e8 at -9.31, where ψ'(x) is 14.2)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["trigamma", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.polygamma(1, x) is off by up to 4.9e-10 relative (at x = 1.13) against SciPy.
TOLERANCES = {"float64": (2e-9, 1e-12)}


def numpy(x):
    from scipy import special

    # Reflected below zero, ψ'(x) = π²/sin²(πx) - ψ'(1 - x): SciPy's own polygamma(1, x) sums
    # about |x| terms there (20 ms an element at x = -1e6, minutes at -1e9).
    value = special.polygamma(1, np.where(x < 0, 1 - x, x))
    shift = x - np.round(x)  # exact; sin²(πx) = sin²(π shift), 0 at the poles
    reflected = np.pi**2 / np.sin(np.pi * shift) ** 2 - value
    return np.asarray(np.where(x < 0, reflected, value), dtype=x.dtype)


def pytorch(x):
    # Reflected below zero as well: torch.special.polygamma(1, x) drifts there (3e-10 off at
    # x = -1e6, 12.1 at -1e300, a pole). Each branch gets a safe argument where it is not taken,
    # so that its infinities stay out of the gradient.
    below = x < 0
    z = torch.where(below, x, -0.5)
    shift = z - torch.round(z)
    # (π / sin)², not π² / sin²: the latter's backward takes sin⁴, which underflows near the
    # poles (an infinite gradient at x = -2e-87, where the slope is 2.5e260).
    reflected = (torch.pi / torch.sin(torch.pi * shift)) ** 2 - torch.special.polygamma(1, 1 - z)
    return torch.where(below, reflected, torch.special.polygamma(1, torch.where(below, 1.0, x)))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "** 2 - torch.special.polygamma(1, 1 - z)",
        "** 2 + torch.special.polygamma(1, 1 - z)",
        "wrong sign in the reflection formula",
    ),
]
