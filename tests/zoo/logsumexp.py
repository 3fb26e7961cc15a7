"""log sum_i exp(x_i) along the last axis, the maximum subtracted first; the Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["logsumexp", "x:...n", "--array-api"]
MIN_DIMS = 0
# The maximum of no terms is undefined.
SIDES = {"n": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    peak = x.max(axis=-1, keepdims=True)
    return np.asarray(peak[..., 0] + np.log(np.exp(x - peak).sum(axis=-1)))


def array_api(x):
    xp = array_namespace(x)
    peak = xp.max(x, axis=-1, keepdims=True)
    return peak[..., 0] + xp.log(xp.sum(xp.exp(x - peak), axis=-1))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "array_api",
        "peak = xp.max(x, axis=-1, keepdims=True)",
        "peak = xp.zeros_like(x[..., :1])",
        "dropped stabilisation",
    ),
    ("array_api", "xp.sum(xp.exp(x - peak), axis=-1)", "xp.sum(xp.exp(x - peak), axis=0)", "wrong axis"),
]
