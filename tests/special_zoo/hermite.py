"""The physicists' Hermite polynomial H_n(x): large, sign-alternating terms; no JAX port."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = [
    "hermite",
    "x",
    "--param",
    "n: int = 5",
    "--no-gradient",
    "torch.special.hermite_polynomial_h has no derivative",
]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {"n": "st.integers(0, 8)"}
# torch.special.hermite_polynomial_h has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")
# Near the roots of H_8, PyTorch's float32 recurrence is off by up to 0.033 (its terms reach 5e6).
TOLERANCES = {"float32": (1e-5, 0.13)}


def numpy(x, n):
    from scipy import special

    return np.asarray(special.eval_hermite(n, x), dtype=x.dtype)


def pytorch(x, n):
    return torch.special.hermite_polynomial_h(x, n)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "torch.special.hermite_polynomial_h(x, n)",
        "torch.special.hermite_polynomial_he(x, n)",
        "probabilists' He_n for physicists' H_n",
    ),
]
