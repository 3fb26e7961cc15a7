"""Leaky ReLU: x for x >= 0, negative_slope * x below, elementwise."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["leaky_relu", "x", "--param", "negative_slope: float = 0.01"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {"negative_slope": "st.floats(0.0, 0.5)"}


def numpy(x, negative_slope):
    return np.asarray(np.where(x >= 0, x, negative_slope * x))


def pytorch(x, negative_slope):
    return torch.nn.functional.leaky_relu(x, negative_slope)


def jax(x, negative_slope):
    import jax.numpy as jnp

    return jnp.where(x >= 0, x, negative_slope * x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.nn.functional.leaky_relu(x, negative_slope)",
        "torch.nn.functional.leaky_relu(x)",
        "dropped term (parameter left at its default 0.01)",
    ),
    (
        "jax",
        "jnp.where(x >= 0, x, negative_slope * x)",
        "jnp.maximum(x, 0.01 * x)",
        "wrong constant",
    ),
]
