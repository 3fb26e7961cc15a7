"""The entropy term -x log x on [0, ∞): 0 at 0 by continuity, an infinite derivative there."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["entr", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 10]"}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.entr(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.entr(x)


def jax(x):
    import jax

    return jax.scipy.special.entr(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.entr(x)", "torch.special.xlogy(x, x)", "sign (x log x, not -x log x)"),
]
