"""Batch normalisation, training mode: standardise each feature over the batch, scale, shift."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
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


#: A false alarm's inputs: float16 cannot hold eps = 1e-8, so PyTorch's exact mean gives the
#: constant third feature a variance of 0, then 0/0 (thorough seed 777175664; NumPy's own float16
#: mean is a little off, so its run in float16 stayed finite).
PINNED = [
    (
        "torch-float16-cpu",
        ([[-32.0, 32.0, 25.6875]] + [[25.6875] * 3] * 4, [-32.0, 32.0, 0.0], [-32.0, 32.0, 0.0]),
        {"eps": 1e-8},
    ),
]

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
