"""Standardise along the last axis: (x - mean) / sqrt(var + eps), var biased; the Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["zscore", "x:...d", "--param", "eps: float = 1e-5", "--array-api"]
MIN_DIMS = 0
# Mean and variance of an empty axis are undefined.
SIDES = {"d": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(x, eps):
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def array_api(x, eps):
    xp = array_namespace(x)
    mean = xp.mean(x, axis=-1, keepdims=True)
    variance = xp.var(x, axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(variance + eps)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "array_api",
        "xp.var(x, axis=-1, keepdims=True)",
        "xp.var(x, axis=-1, keepdims=True, correction=1)",
        "wrong constant (unbiased variance)",
    ),
    ("array_api", "(x - mean) / xp.sqrt(variance + eps)", "(x - mean) / xp.sqrt(variance) + eps", "eps misplaced"),
]
