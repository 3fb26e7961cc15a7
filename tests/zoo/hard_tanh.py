"""Hard tanh: x clipped to [min_val, max_val], elementwise."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = [
    "hard_tanh",
    "x",
    "--param",
    "min_val: float = -1.0",
    "--param",
    "max_val: float = 1.0",
]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
# max_val above min_val: with both equal, hard tanh is a constant, whose gradient JAX's clip gives
# as 1 at x = min_val = max_val (the harness's first run drew it).
PARAMETERS = {"min_val": "st.floats(-5.0, 0.0)", "max_val": "st.floats(min_val + 0.1, min_val + 10.0)"}


def numpy(x, min_val, max_val):
    return np.asarray(np.clip(x, min_val, max_val))


def pytorch(x, min_val, max_val):
    return torch.nn.functional.hardtanh(x, min_val, max_val)


def jax(x, min_val, max_val):
    import jax.numpy as jnp

    return jnp.clip(x, min_val, max_val)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.nn.functional.hardtanh(x, min_val, max_val)",
        "torch.nn.functional.hardtanh_(x, min_val, max_val)",
        "in-place change of an input",
    ),
    ("jax", "jnp.clip(x, min_val, max_val)", "jnp.clip(x, -1.0, 1.0)", "wrong constant"),
]
