"""log sigmoid(x) = -log(1 + exp(-x)), written as -logaddexp(0, -x) to stay finite; the Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["log_sigmoid", "x", "--array-api"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    return np.asarray(-np.logaddexp(0.0, -x))


def array_api(x):
    xp = array_namespace(x)
    return -xp.logaddexp(xp.zeros_like(x), -x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("array_api", "-xp.logaddexp(xp.zeros_like(x), -x)", "-xp.log(1 + xp.exp(-x))", "missing stabilisation"),
    ("array_api", "xp.logaddexp(xp.zeros_like(x), -x)", "xp.logaddexp(xp.zeros_like(x), x)", "sign flipped"),
]
