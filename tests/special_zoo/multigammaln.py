"""The log of the multivariate gamma function Γ_d(a), for a > (d - 1)/2: a sum of d lgammas and
a constant d(d - 1)/4 log π; +inf as a reaches (d - 1)/2."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["multigammaln", "a", "--param", "d: int = 3"]
MIN_DIMS = 0
SIDES = {}
# Defined for a > (d - 1)/2, that is a > 1.5 for every d drawn (1 to 4).
VALUES = {"a": "(1.5, 10]"}
PARAMETERS = {"d": "st.integers(1, 4)"}


def numpy(a, d):
    from scipy import special

    return np.asarray(special.multigammaln(a, d), dtype=a.dtype)


def pytorch(a, d):
    return torch.special.multigammaln(a, d)


def jax(a, d):
    import jax

    return jax.scipy.special.multigammaln(a, d)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "jax.scipy.special.multigammaln(a, d)",
        "jax.scipy.special.multigammaln(a, d - 1)",
        "off by one (dimension)",
    ),
]
