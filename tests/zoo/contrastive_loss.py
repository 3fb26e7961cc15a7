"""InfoNCE (van den Oord et al., 2018; SimCLR's loss without its second direction): the mean over
rows i of -log softmax_j(cos(a_i, b_j) / temperature)_i, each row divided by max(its norm, 1e-12)
as F.normalize does, so that a zero row stays zero."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["contrastive_loss", "a:nd", "b:nd", "--param", "temperature: float = 0.1"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {"temperature": "st.floats(0.05, 1.0)"}


def numpy(a, b, temperature):
    za = a / np.maximum(np.sqrt((a * a).sum(axis=-1, keepdims=True)), 1e-12)
    zb = b / np.maximum(np.sqrt((b * b).sum(axis=-1, keepdims=True)), 1e-12)
    logits = za @ zb.T / temperature
    top = logits.max(axis=-1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    return np.asarray(-np.mean(np.diagonal(log_p)))


def pytorch(a, b, temperature):
    za = torch.nn.functional.normalize(a, dim=-1)
    zb = torch.nn.functional.normalize(b, dim=-1)
    labels = torch.arange(a.shape[0], device=a.device)
    return torch.nn.functional.cross_entropy(za @ zb.T / temperature, labels)


def jax(a, b, temperature):
    import jax
    import jax.numpy as jnp

    # The norms through the squares, clamped before the square root: the gradient of
    # jnp.linalg.norm at a zero row is NaN.
    za = a / jnp.sqrt(jnp.maximum(jnp.sum(a * a, axis=-1, keepdims=True), 1e-24))
    zb = b / jnp.sqrt(jnp.maximum(jnp.sum(b * b, axis=-1, keepdims=True), 1e-24))
    log_p = jax.nn.log_softmax(za @ zb.T / temperature, axis=-1)
    return -jnp.mean(jnp.diagonal(log_p))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "za @ zb.T / temperature", "za @ zb.T * temperature", "wrong formula (times the temperature)"),
    ("jax", "temperature, axis=-1)", "temperature, axis=0)", "wrong axis"),
]
