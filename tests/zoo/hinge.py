"""Hinge loss, averaged over the last axis: mean_i max(0, margin - labels_i * scores_i)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["hinge", "scores:...n", "labels:...n", "--param", "margin: float = 1.0"]
MIN_DIMS = 0
# The mean of no terms is undefined.
SIDES = {"n": (1, 8)}
# Labels are +-1 for a binary classifier; values in between weigh a sample down.
VALUES = {"labels": (-1.0, 1.0)}
PARAMETERS = {}


def numpy(scores, labels, margin):
    return np.asarray(np.maximum(0.0, margin - labels * scores).mean(axis=-1))


def pytorch(scores, labels, margin):
    return torch.clamp(margin - labels * scores, min=0).mean(dim=-1)


def jax(scores, labels, margin):
    import jax

    return jax.nn.relu(margin - labels * scores).mean(axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", ".mean(dim=-1)", ".sum(dim=-1)", "wrong reduction"),
    ("jax", "margin - labels * scores", "1.0 - labels * scores", "wrong constant (margin ignored)"),
]
