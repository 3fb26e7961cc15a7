"""The logit log(p / (1 - p)) on [0, 1]: -inf at 0, +inf at 1."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["logit", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {"x": "[0, 1]"}
PARAMETERS = {}


def numpy(x):
    from scipy import special

    return np.asarray(special.logit(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.logit(x)


def jax(x):
    import jax

    return jax.scipy.special.logit(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.logit(x)",
        "torch.special.logit(x.clamp(0.01, 0.99))",
        "clamp in the wrong place (to keep it finite)",
    ),
]
