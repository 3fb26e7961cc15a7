"""Moving average over a sliding window of the last axis, from differences of the cumulative sum."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["moving_average", "x:...n", "--param", "window: int = 3"]
MIN_DIMS = 0
# The window (drawn in 1..n) must fit at least once; the output has n - window + 1 values.
SIDES = {"n": (1, 12)}
VALUES = {}
PARAMETERS = {}


def numpy(x, window):
    # mean(x[i : i + w]) = (S[i + w] - S[i]) / w with S the cumulative sum, S[0] = 0
    sums = np.cumsum(x, axis=-1)
    sums = np.concatenate([np.zeros_like(x[..., :1]), sums], axis=-1)
    return (sums[..., window:] - sums[..., :-window]) / window


def pytorch(x, window):
    sums = torch.nn.functional.pad(x.cumsum(dim=-1), (1, 0))
    return (sums[..., window:] - sums[..., :-window]) / window


def jax(x, window):
    import jax.numpy as jnp

    sums = jnp.cumsum(x, axis=-1)
    sums = jnp.pad(sums, [(0, 0)] * (x.ndim - 1) + [(1, 0)])
    return (sums[..., window:] - sums[..., :-window]) / window


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.nn.functional.pad(x.cumsum(dim=-1), (1, 0))",
        "torch.nn.functional.pad(x.cumsum(dim=-1), (0, 1))",
        "wrong constant (padding on the wrong side)",
    ),
    ("jax", "/ window", "/ x.shape[-1]", "wrong constant (divides by n)"),
]
