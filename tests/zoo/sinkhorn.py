"""Entropic optimal transport between uniform marginals: a few log-domain Sinkhorn iterations.

Returns the transport plan P_ij = exp((f_i + g_j - C_ij) / epsilon) after `n_iters` rounds of
    f_i = epsilon (log a_i - LSE_j((g_j - C_ij) / epsilon)),
    g_j = epsilon (log b_j - LSE_i((f_i - C_ij) / epsilon)),
with a_i = 1 / n, b_j = 1 / m: the columns of P sum to b exactly, the rows to a in the limit.
"""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = [
    "sinkhorn",
    "cost:...nm",
    "--param",
    "epsilon: float = 0.1",
    "--param",
    "n_iters: int = 10",
]
MIN_DIMS = 0
# Uniform marginals over no points are undefined.
SIDES = {"n": (1, 6), "m": (1, 6)}
VALUES = {}
PARAMETERS = {"epsilon": "st.floats(0.1, 10.0)", "n_iters": "st.integers(1, 10)"}


def numpy(cost, epsilon, n_iters):
    import math

    n, m = cost.shape[-2:]
    log_a, log_b = -math.log(n), -math.log(m)  # Python floats: np.log(n) would upcast float32
    f = np.zeros(cost.shape[:-1], dtype=cost.dtype)  # (..., n)
    g = np.zeros((*cost.shape[:-2], m), dtype=cost.dtype)  # (..., m)
    for _ in range(n_iters):
        z = (g[..., None, :] - cost) / epsilon  # (..., n, m), log-sum-exp over j
        z_max = z.max(axis=-1, keepdims=True)
        lse = z_max[..., 0] + np.log(np.exp(z - z_max).sum(axis=-1))
        f = epsilon * (log_a - lse)
        z = (f[..., :, None] - cost) / epsilon  # log-sum-exp over i
        z_max = z.max(axis=-2, keepdims=True)
        lse = z_max[..., 0, :] + np.log(np.exp(z - z_max).sum(axis=-2))
        g = epsilon * (log_b - lse)
    return np.exp((f[..., :, None] + g[..., None, :] - cost) / epsilon)


def pytorch(cost, epsilon, n_iters):
    import math

    n, m = cost.shape[-2:]
    log_a, log_b = -math.log(n), -math.log(m)
    f = cost.new_zeros(cost.shape[:-1])
    g = cost.new_zeros((*cost.shape[:-2], m))
    for _ in range(n_iters):
        f = epsilon * (log_a - torch.logsumexp((g.unsqueeze(-2) - cost) / epsilon, dim=-1))
        g = epsilon * (log_b - torch.logsumexp((f.unsqueeze(-1) - cost) / epsilon, dim=-2))
    return torch.exp((f.unsqueeze(-1) + g.unsqueeze(-2) - cost) / epsilon)


def jax(cost, epsilon, n_iters):
    import jax
    import jax.numpy as jnp

    n, m = cost.shape[-2:]
    f = jnp.zeros(cost.shape[:-1], dtype=cost.dtype)
    g = jnp.zeros((*cost.shape[:-2], m), dtype=cost.dtype)
    for _ in range(n_iters):
        f = epsilon * (-jnp.log(n) - jax.nn.logsumexp((g[..., None, :] - cost) / epsilon, axis=-1))
        g = epsilon * (-jnp.log(m) - jax.nn.logsumexp((f[..., :, None] - cost) / epsilon, axis=-2))
    return jnp.exp((f[..., :, None] + g[..., None, :] - cost) / epsilon)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "(f.unsqueeze(-1) - cost) / epsilon, dim=-2)",
        "(f.unsqueeze(-1) - cost) / epsilon, dim=-1)",
        "wrong axis",
    ),
    (
        "jax",
        "jax.nn.logsumexp((g[..., None, :] - cost) / epsilon, axis=-1)",
        "jnp.log(jnp.sum(jnp.exp((g[..., None, :] - cost) / epsilon), axis=-1))",
        "missing stabilisation",
    ),
]
