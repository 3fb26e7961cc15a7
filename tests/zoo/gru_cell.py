"""One step of a GRU (PyTorch's gate order r, z, n): r = s(W_ir x + W_hr h), z = s(W_iz x + W_hz h),
n = tanh(W_in x + r * (W_hn h)), h' = (1 - z) * n + z * h."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["gru_cell", "x:...i", "h:...k", "w_ih:gi", "w_hh:gk", "--size", "g: 3k"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, h, w_ih, w_hh):
    def sigmoid(a):
        return 0.5 * (1.0 + np.tanh(0.5 * a))

    gi_r, gi_z, gi_n = np.split(x @ w_ih.T, 3, axis=-1)
    gh_r, gh_z, gh_n = np.split(h @ w_hh.T, 3, axis=-1)
    r = sigmoid(gi_r + gh_r)
    z = sigmoid(gi_z + gh_z)
    n = np.tanh(gi_n + r * gh_n)
    return (1 - z) * n + z * h


def pytorch(x, h, w_ih, w_hh):
    batch = x.shape[:-1]
    out = torch.gru_cell(x.reshape(-1, x.shape[-1]), h.reshape(-1, h.shape[-1]), w_ih, w_hh, None, None)
    return out.reshape(*batch, h.shape[-1])


def jax(x, h, w_ih, w_hh):
    import jax
    import jax.numpy as jnp

    gi_r, gi_z, gi_n = jnp.split(x @ w_ih.T, 3, axis=-1)
    gh_r, gh_z, gh_n = jnp.split(h @ w_hh.T, 3, axis=-1)
    r = jax.nn.sigmoid(gi_r + gh_r)
    z = jax.nn.sigmoid(gi_z + gh_z)
    n = jnp.tanh(gi_n + r * gh_n)
    return (1 - z) * n + z * h


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("jax", "(1 - z) * n + z * h", "z * n + (1 - z) * h", "wrong convention (update gate swapped)"),
    (
        "jax",
        "n = jnp.tanh(gi_n + r * gh_n)",
        "n = jnp.tanh(gi_n + (r * h) @ w_hh[-h.shape[-1] :].T)",
        "wrong convention (reset before the matmul)",
    ),
]
