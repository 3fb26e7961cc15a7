"""Running log-sum-exp along the last axis: y_i = log(exp(x_1) + ... + exp(x_i))."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["running_logsumexp", "x:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    # y_i = logaddexp(y_(i-1), x_i): each step is stable on its own, whatever the scale.
    return np.logaddexp.accumulate(x, axis=-1)


def pytorch(x):
    return torch.logcumsumexp(x, dim=-1)


def jax(x):
    import jax

    return jax.lax.cumlogsumexp(x, axis=x.ndim - 1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.logcumsumexp(x, dim=-1)",
        "torch.log(torch.cumsum(torch.exp(x), dim=-1))",
        "missing stabilisation",
    ),
    (
        "jax",
        "jax.lax.cumlogsumexp(x, axis=x.ndim - 1)",
        "jax.lax.cumlogsumexp(x, axis=x.ndim - 1, reverse=True)",
        "wrong direction",
    ),
]
