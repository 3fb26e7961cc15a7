"""The scaled complementary error function e^(x²) erfc(x): overflows for x below -26.6, decays like
1/(x sqrt(π)). No JAX port: jax.scipy.special.erfcx is 0 in float32 for x in [9.19, 9.42]."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["erfcx", "x"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# torch.special.erfcx has no float16 or bfloat16 kernel on a CPU.
DTYPES = ("float64", "float32")


def numpy(x):
    from scipy import special

    return np.asarray(special.erfcx(x), dtype=x.dtype)


def pytorch(x):
    return torch.special.erfcx(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "torch.special.erfcx(x)", "torch.special.erfc(x)", "unscaled for scaled (erfc for erfcx)"),
]
