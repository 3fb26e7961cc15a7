"""Batch normalisation, training mode: standardise each feature over the batch, scale, shift."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `python scripts/new_algorithm.py` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["batch_norm", "x:nd", "weight:d", "bias:d", "--param", "eps: float = 1e-5"]
MIN_DIMS = 0
# Batch statistics of an empty batch are undefined.
SIDES = {"n": (1, 8)}
VALUES = {}
PARAMETERS = {}


def numpy(x, weight, bias, eps):
    mean = x.mean(axis=0)
    variance = x.var(axis=0)  # biased (ddof=0): the statistic of the batch itself
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def pytorch(x, weight, bias, eps):
    mean = x.mean(dim=0)
    variance = x.var(dim=0, correction=0)
    return (x - mean) / torch.sqrt(variance + eps) * weight + bias


def jax(x, weight, bias, eps):
    import jax.numpy as jnp

    mean = jnp.mean(x, axis=0)
    variance = jnp.var(x, axis=0)
    return (x - mean) / jnp.sqrt(variance + eps) * weight + bias


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    # torch.var is unbiased by default, np.var is not: the classic porting slip.
    ("pytorch", "x.var(dim=0, correction=0)", "x.var(dim=0)", "wrong constant (ddof)"),
    (
        "jax",
        "mean = jnp.mean(x, axis=0)",
        "mean = jnp.mean(x, axis=-1, keepdims=True)",
        "wrong axis",
    ),
]
