"""Binary focal loss from logits, elementwise: (1 - p_t)^gamma * BCE(logits, targets)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["focal_loss", "logits:...", "targets:...", "--param", "gamma: float = 2.0"]
MIN_DIMS = 0
SIDES = {}
# Soft targets in [0, 1]; 0 and 1 are the hard labels.
VALUES = {"targets": (0.0, 1.0)}
# gamma >= 1 (the paper uses 2): for gamma < 1, (1 - p_t)^gamma has an infinite slope where
# p_t rounds to 1, and its gradient is nan at saturated logits.
PARAMETERS = {"gamma": "st.floats(1.0, 5.0)"}


def numpy(logits, targets, gamma):
    p = np.exp(-np.logaddexp(0.0, -logits))  # sigmoid, without overflow
    cross_entropy = np.logaddexp(0.0, logits) - targets * logits  # BCE with logits
    p_t = p * targets + (1 - p) * (1 - targets)
    return np.asarray(cross_entropy * (1 - p_t) ** gamma)


def pytorch(logits, targets, gamma):
    p = torch.sigmoid(logits)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    return ce * (1 - p_t) ** gamma


def jax(logits, targets, gamma):
    import jax

    p = jax.nn.sigmoid(logits)
    ce = jax.nn.softplus(logits) - targets * logits
    p_t = p * targets + (1 - p) * (1 - targets)
    return ce * (1 - p_t) ** gamma


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "p = torch.sigmoid(logits)",
        "p = torch.sigmoid(logits).detach()",
        "detached operand",
    ),
    ("jax", "(1 - p_t) ** gamma", "(1 - p_t) ** 2", "wrong constant (gamma fixed at 2)"),
]
