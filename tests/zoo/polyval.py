"""Polynomial evaluation by Horner's rule, highest power first (as `np.polyval`)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["polyval", "x:...", "coefficients:c"]
MIN_DIMS = 0
# Up to degree 9: high powers of large x are the point.
SIDES = {"c": (0, 10)}
VALUES = {}
PARAMETERS = {}


def numpy(x, coefficients):
    # p(x) = c_0 x^(C-1) + ... + c_(C-1) = (...((c_0) x + c_1) x + ...) x + c_(C-1)
    result = np.zeros_like(x)
    for coefficient in coefficients:
        result = result * x + coefficient
    return np.asarray(result)


def pytorch(x, coefficients):
    result = torch.zeros_like(x)
    for coefficient in coefficients:
        result = result * x + coefficient
    return result


def jax(x, coefficients):
    import jax.numpy as jnp

    return jnp.polyval(coefficients, x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "result = result * x + coefficient",
        "result = result * x.detach() + coefficient",
        "detached operand",
    ),
    (
        "jax",
        "jnp.polyval(coefficients, x)",
        "jnp.polyval(coefficients[::-1], x)",
        "wrong convention (lowest power first)",
    ),
]
