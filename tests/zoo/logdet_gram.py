"""Log-determinant of a Gram matrix through its Cholesky factor: log det(A Aᵀ) = 2 Σ log L_ii, where
L Lᵀ = A Aᵀ (A has at least as many columns as rows, so that A Aᵀ is positive definite)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["logdet_gram", "a:...nk"]
MIN_DIMS = 0
# k >= n: rank n almost surely; near-singular draws (nearly dependent rows) happen too.
SIDES = {"k": ("n", 5)}
VALUES = {}
PARAMETERS = {}
# PyTorch has no float16 or bfloat16 Cholesky on a CPU.
DTYPES = ("float32", "float64")


def numpy(a):
    gram = a @ np.swapaxes(a, -1, -2)
    factor = np.linalg.cholesky(gram)
    return np.asarray(2.0 * np.sum(np.log(np.diagonal(factor, axis1=-2, axis2=-1)), axis=-1))


def pytorch(a):
    factor = torch.linalg.cholesky(a @ a.transpose(-1, -2))
    return 2.0 * torch.log(torch.diagonal(factor, dim1=-2, dim2=-1)).sum(dim=-1)


def jax(a):
    import jax.numpy as jnp

    factor = jnp.linalg.cholesky(a @ jnp.swapaxes(a, -1, -2))
    return 2.0 * jnp.sum(jnp.log(jnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "2.0 * torch.log", "torch.log", "forgot the square (log det of L, not of L Lᵀ)"),
    ("jax", "jnp.swapaxes(a, -1, -2)", "a", "Gram matrix without the transpose"),
]
