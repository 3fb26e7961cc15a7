"""Softplus with a sharpness beta: log(1 + exp(beta x)) / beta, with log1p to stay finite."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["softplus", "x", "--param", "beta: float = 1.0"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, beta):
    # log(1 + e^z) = max(z, 0) + log1p(e^(-|z|)): no overflow for large z, no loss for small e^z.
    z = beta * x
    return np.asarray((np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta)


def pytorch(x, beta):
    # Not torch.nn.functional.softplus: above its threshold (beta x > 20) it returns x itself,
    # off by log1p(exp(-beta x)) / beta, up to 2e-9. The first version, relu(z) + log1p(exp(-|z|))
    # as in NumPy, had gradient 0 at z = 0 instead of 1/2 (PyTorch's subgradients of relu and abs
    # at 0 are both 0): the harness found it.
    z = beta * x
    return torch.logaddexp(z, torch.zeros_like(z)) / beta


def jax(x, beta):
    import jax

    return jax.nn.softplus(beta * x) / beta


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.logaddexp(z, torch.zeros_like(z)) / beta",
        "torch.log1p(torch.exp(z)) / beta",
        "missing stabilisation",
    ),
    (
        "jax",
        "jax.nn.softplus(beta * x) / beta",
        "jax.nn.softplus(beta * x)",
        "dropped term (1 / beta)",
    ),
]
