"""Huber loss of r = prediction - target: r^2 / 2 for |r| <= delta, else delta (|r| - delta / 2)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["huber", "prediction:...", "target:...", "--param", "delta: float = 1.0"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(prediction, target, delta):
    residual = np.abs(prediction - target)
    quadratic = 0.5 * residual**2
    linear = delta * (residual - 0.5 * delta)
    return np.asarray(np.where(residual <= delta, quadratic, linear))


def pytorch(prediction, target, delta):
    return torch.nn.functional.huber_loss(prediction, target, reduction="none", delta=delta)


def jax(prediction, target, delta):
    import jax.numpy as jnp

    residual = jnp.abs(prediction - target)
    return jnp.where(residual <= delta, 0.5 * residual**2, delta * (residual - 0.5 * delta))


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    # smooth_l1_loss(beta=delta) is huber_loss / delta: easy to take one for the other.
    (
        "pytorch",
        'torch.nn.functional.huber_loss(prediction, target, reduction="none", delta=delta)',
        'torch.nn.functional.smooth_l1_loss(prediction, target, reduction="none", beta=delta)',
        "wrong constant (smooth L1 is Huber / delta)",
    ),
    ("jax", "0.5 * residual**2", "residual**2", "wrong constant"),
]
