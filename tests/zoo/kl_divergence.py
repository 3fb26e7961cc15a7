"""KL divergence KL(p || q) between two categorical distributions given as logits (last axis)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["kl_divergence", "p_logits:...n", "q_logits:...n"]
MIN_DIMS = 0
# A distribution needs at least one category.
SIDES = {"n": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(p_logits, q_logits):
    # log-softmax of each, with the maximum subtracted first
    shifted = p_logits - p_logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    shifted = q_logits - q_logits.max(axis=-1, keepdims=True)
    log_q = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    # KL(p || q) = sum_i p_i (log p_i - log q_i)
    return np.asarray((np.exp(log_p) * (log_p - log_q)).sum(axis=-1))


def pytorch(p_logits, q_logits):
    log_p = torch.log_softmax(p_logits, dim=-1)
    log_q = torch.log_softmax(q_logits, dim=-1)
    # kl_div(input, target) is KL(target || input), with input as log-probabilities
    kl = torch.nn.functional.kl_div(log_q, log_p, reduction="none", log_target=True)
    return kl.sum(dim=-1)


def jax(p_logits, q_logits):
    import jax
    import jax.numpy as jnp

    log_p = jax.nn.log_softmax(p_logits, axis=-1)
    log_q = jax.nn.log_softmax(q_logits, axis=-1)
    return jnp.sum(jnp.exp(log_p) * (log_p - log_q), axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "kl_div(log_q, log_p,", "kl_div(log_p, log_q,", "swapped arguments (KL(q || p))"),
    (
        "jax",
        "log_p = jax.nn.log_softmax(p_logits, axis=-1)",
        "log_p = jax.lax.stop_gradient(jax.nn.log_softmax(p_logits, axis=-1))",
        "detached operand",
    ),
]
