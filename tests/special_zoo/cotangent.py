"""The cotangent cos(x)/sin(x): poles at kπ, x = 0 among them, where the sign of zero picks the
infinity; the ports take 1/tan(x), as most code does."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["cotangent", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(np.cos(x) / np.sin(x))


def pytorch(x):
    return 1 / torch.tan(x)


def jax(x):
    import jax.numpy as jnp

    return 1 / jnp.tan(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "1 / jnp.tan(x)",
        "jnp.cos(x) / jnp.sin(x.astype(jnp.float32))",
        "float32 downcast (a cast left from debugging)",
    ),
]
