"""Ridge regression through the normal equations: w = (XᵀX + λI)⁻¹ Xᵀy, for each batch."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["ridge", "x:...nd", "y:...n", "--param", "lam: float = 1.0"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {"lam": "st.floats(0.5, 2.0)"}
# No LU factorisation of float16 or bfloat16, in NumPy or in PyTorch on a CPU.
DTYPES = ("float32", "float64")


def numpy(x, y, lam):
    xt = np.swapaxes(x, -1, -2)
    gram = xt @ x + lam * np.eye(x.shape[-1], dtype=x.dtype)
    return np.linalg.solve(gram, xt @ y[..., None])[..., 0]


def pytorch(x, y, lam):
    xt = x.transpose(-1, -2)
    gram = xt @ x + lam * torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    return torch.linalg.solve(gram, xt @ y.unsqueeze(-1)).squeeze(-1)


def jax(x, y, lam):
    import jax.numpy as jnp

    xt = jnp.swapaxes(x, -1, -2)
    gram = xt @ x + lam * jnp.eye(x.shape[-1], dtype=x.dtype)
    return jnp.linalg.solve(gram, xt @ y[..., None])[..., 0]


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "lam * torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)",
        "lam",
        "penalty on every entry",
    ),
    ("jax", "lam * jnp.eye", "lam * x.shape[-2] * jnp.eye", "penalty scaled by n"),
]
