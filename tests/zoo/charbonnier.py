"""Charbonnier loss, averaged over the last axis: mean_i sqrt((prediction_i - target_i)^2 + eps^2).

The Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["charbonnier", "prediction:...n", "target:...n", "--param", "eps: float = 1e-3", "--array-api"]
MIN_DIMS = 0
# The mean of no terms is undefined.
SIDES = {"n": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(prediction, target, eps):
    return np.asarray(np.sqrt((prediction - target) ** 2 + eps**2).mean(axis=-1))


def array_api(prediction, target, eps):
    xp = array_namespace(prediction, target)
    return xp.mean(xp.sqrt((prediction - target) ** 2 + eps**2), axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("array_api", "xp.mean(", "xp.sum(", "wrong reduction"),
    (
        "array_api",
        "(prediction - target) ** 2",
        "xp.astype(prediction - target, xp.float32) ** 2",
        "downcast (float32 arithmetic)",
    ),
]
