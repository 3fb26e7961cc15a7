"""Two-layer perceptron with the tanh approximation of GELU: gelu(x @ w1 + b1) @ w2."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["mlp", "x:...d", "w1:dh", "b1:h", "w2:he"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, w1, b1, w2):
    h = x @ w1 + b1
    # GELU, tanh approximation: 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3)))
    h = 0.5 * h * (1.0 + np.tanh((2.0 / np.pi) ** 0.5 * (h + 0.044715 * h**3)))
    return np.asarray(h @ w2)


def pytorch(x, w1, b1, w2):
    h = torch.nn.functional.gelu(x @ w1 + b1, approximate="tanh")
    return h @ w2


def jax(x, w1, b1, w2):
    import jax

    h = jax.nn.gelu(x @ w1 + b1, approximate=True)
    return h @ w2


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", ', approximate="tanh"', "", "wrong constant (exact GELU for the tanh one)"),
    ("jax", "x @ w1 + b1", "x @ w1", "dropped term (bias)"),
]
