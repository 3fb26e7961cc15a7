"""Log-cosh loss, elementwise: log(cosh(prediction - target)), computed without overflow."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["log_cosh", "prediction:...", "target:..."]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(prediction, target):
    import math

    # log cosh r = |r| + log((1 + e^(-2|r|)) / 2): cosh overflows from |r| = 710 (89 in float32).
    r = np.abs(prediction - target)
    return np.asarray(r + np.log1p(np.exp(-2 * r)) - math.log(2))


def pytorch(prediction, target):
    import math

    r = (prediction - target).abs()
    return r + torch.nn.functional.softplus(-2 * r) - math.log(2)


def jax(prediction, target):
    import jax.numpy as jnp

    r = prediction - target
    return jnp.logaddexp(r, -r) - jnp.log(2.0)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "r + torch.nn.functional.softplus(-2 * r) - math.log(2)",
        "torch.log(torch.cosh(r))",
        "missing stabilisation",
    ),
    (
        "jax",
        "jnp.logaddexp(r, -r) - jnp.log(2.0)",
        "jnp.logaddexp(r, -r)",
        "dropped term (- log 2)",
    ),
]
