"""Gaussian (RBF) kernel between two sets of points: exp(-gamma ||x_i - y_j||^2); the Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["rbf_kernel", "x:...nd", "y:...md", "--param", "gamma: float = 1.0", "--array-api"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, y, gamma):
    difference = x[..., :, None, :] - y[..., None, :, :]
    return np.exp(-gamma * np.sum(difference**2, axis=-1))


def array_api(x, y, gamma):
    xp = array_namespace(x, y)
    difference = xp.expand_dims(x, axis=-2) - xp.expand_dims(y, axis=-3)
    return xp.exp(-gamma * xp.sum(difference**2, axis=-1))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("array_api", "xp.expand_dims(y, axis=-3)", "xp.expand_dims(y, axis=-2)", "wrong axis"),
    ("array_api", "difference**2", "xp.abs(difference)", "wrong formula (Laplacian kernel)"),
]
