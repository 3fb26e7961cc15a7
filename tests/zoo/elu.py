"""ELU: x for x > 0, alpha (exp(x) - 1) below, with expm1 for accuracy near 0."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["elu", "x", "--param", "alpha: float = 1.0"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, alpha):
    # expm1 of min(x, 0): the branch not taken must not overflow either.
    return np.asarray(np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))))


def pytorch(x, alpha):
    # Clamp inside the branch not taken too: torch.where sends a zero gradient there, but
    # 0 * exp(1e4) = 0 * inf is nan.
    return torch.where(x > 0, x, alpha * torch.expm1(x.clamp(max=0)))


def jax(x, alpha):
    import jax

    return jax.nn.elu(x, alpha)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.expm1(x.clamp(max=0))",
        "torch.expm1(x)",
        "missing stabilisation (nan gradient)",
    ),
    ("pytorch", "torch.expm1(x.clamp(max=0))", "torch.exp(x.clamp(max=0))", "dropped term (- 1)"),
    ("jax", "jax.nn.elu(x, alpha)", "jax.nn.elu(x)", "dropped term (alpha left at 1)"),
]
