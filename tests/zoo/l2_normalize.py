"""x / max(||x||_2, eps) along the last axis (unit vectors, zero stays zero); the Array API style."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["l2_normalize", "x:...d", "--param", "eps: float = 1e-12", "--array-api"]
MIN_DIMS = 0
SIDES = {"d": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(x, eps):
    norm = np.sqrt(np.sum(x**2, axis=-1, keepdims=True))
    return x / np.maximum(norm, eps)


def array_api(x, eps):
    xp = array_namespace(x)
    # The root only where it is positive: its derivative at 0 is infinite, NaN in the gradient of
    # a zero vector (xp.linalg.vector_norm's too, in JAX). And eps against the norm: eps**2 is 0
    # in float16 for eps < 2.4e-4, and 0 / 0 is NaN. (The tests caught both in earlier drafts.)
    squared_norm = xp.sum(x**2, axis=-1, keepdims=True)
    positive = squared_norm > 0
    safe = xp.where(positive, squared_norm, xp.ones_like(squared_norm))
    norm = xp.where(positive, xp.sqrt(safe), xp.zeros_like(squared_norm))
    return x / xp.clip(norm, min=eps)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("array_api", "xp.sum(x**2, axis=-1, keepdims=True)", "xp.sum(x**2, axis=0, keepdims=True)", "wrong axis"),
    (
        "array_api",
        "return x / xp.clip(norm, min=eps)",
        "x /= xp.clip(norm, min=eps)\n    return x",
        "in-place change of an input",
    ),
]
