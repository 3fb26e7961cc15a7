"""Cross-entropy of logits against integer class labels: l = logsumexp(z) - z_y, per example."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["labelled_cross_entropy", "logits:...c", "labels:...:int<c"]
MIN_DIMS = 0
SIDES = {"c": (1, 6)}
VALUES = {}
PARAMETERS = {}


def numpy(logits, labels):
    shift = logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(logits - shift).sum(axis=-1)) + shift[..., 0]
    return np.asarray(log_z - np.take_along_axis(logits, labels[..., None], axis=-1)[..., 0])


def pytorch(logits, labels):
    c = logits.shape[-1]
    losses = torch.nn.functional.cross_entropy(logits.reshape(-1, c), labels.reshape(-1), reduction="none")
    return losses.reshape(labels.shape)


def jax(logits, labels):
    import jax
    import jax.numpy as jnp

    log_p = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(log_p, labels[..., None], axis=-1)[..., 0]


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", 'reduction="none"', 'reduction="none", label_smoothing=0.1', "wrong constant (label smoothing)"),
    (
        "jax",
        "log_p = jax.nn.log_softmax(logits, axis=-1)",
        "log_p = logits - jnp.log(jnp.exp(logits).sum(axis=-1, keepdims=True))",
        "dropped stabilisation",
    ),
]
