"""Causal scaled dot-product attention: softmax(q k^T / sqrt(d), masked above the diagonal) v."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["causal_attention", "q:...td", "k:...td", "v:...te"]
MIN_DIMS = 0
# An empty sequence has no first position to attend to; d = 0 has no scale 1/sqrt(d).
SIDES = {"t": (1, 8), "d": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(q, k, v):
    t, d = q.shape[-2:]
    scores = q @ k.swapaxes(-1, -2) / d**0.5
    # Position i attends to positions j <= i only.
    future = np.triu(np.ones((t, t), dtype=bool), k=1)
    scores = np.where(future, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v


def pytorch(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def jax(q, k, v):
    import jax
    import jax.numpy as jnp

    t, d = q.shape[-2:]
    scores = jnp.einsum("...id,...jd->...ij", q, k) / jnp.sqrt(d)
    causal = jnp.tril(jnp.ones((t, t), dtype=bool))
    scores = jnp.where(causal, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "is_causal=True", "is_causal=False", "dropped term (mask)"),
    ("jax", "/ jnp.sqrt(d)", "/ d", "wrong constant (scale 1/d)"),
    (
        "jax",
        "jnp.tril(jnp.ones((t, t), dtype=bool))",
        "jnp.tril(jnp.ones((t, t), dtype=bool), k=-1)",
        "off-by-one mask",
    ),
]
