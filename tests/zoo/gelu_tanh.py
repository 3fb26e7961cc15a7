"""GELU, tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); the Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["gelu_tanh", "x", "--array-api"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x):
    inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)
    return np.asarray(0.5 * x * (1.0 + np.tanh(inner)))


def array_api(x):
    xp = array_namespace(x)
    inner = 0.7978845608028654 * (x + 0.044715 * x**3)  # sqrt(2 / pi)
    return 0.5 * x * (1.0 + xp.tanh(inner))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("array_api", "xp.tanh(inner)", "np.tanh(inner)", "NumPy call in the shared code"),
    ("array_api", "0.044715 * x**3", "0.044715 * x**2", "wrong power"),
]
