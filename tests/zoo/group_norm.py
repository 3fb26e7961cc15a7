"""Group norm (Wu and He, 2018): the channels of x (axis 1) split into `groups` groups, each group
normalised over its channels and positions, y = (x - mean) / sqrt(var + eps) * weight + bias."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["group_norm", "x:ncl", "weight:c", "bias:c", "--param", "groups: int = 1", "--param", "eps: float = 1e-5"]
MIN_DIMS = 0
# PyTorch refuses a group of one value when the batch has one sample ("more than 1 value per
# channel when training"): two samples at least.
SIDES = {"n": (2, 4)}
VALUES = {}
# Any divisor of the channels, one channel per group included (one value per group where l = 1).
PARAMETERS = {"groups": "st.sampled_from([g for g in range(1, x.shape[1] + 1) if x.shape[1] % g == 0])"}


def numpy(x, weight, bias, groups, eps):
    grouped = x.reshape(x.shape[0], groups, -1)
    mean = grouped.mean(axis=-1, keepdims=True)
    var = grouped.var(axis=-1, keepdims=True)
    normalised = ((grouped - mean) / np.sqrt(var + eps)).reshape(x.shape)
    return normalised * weight[:, None] + bias[:, None]


def pytorch(x, weight, bias, groups, eps):
    return torch.nn.functional.group_norm(x, groups, weight, bias, eps=eps)


def jax(x, weight, bias, groups, eps):
    import jax.numpy as jnp

    grouped = x.reshape(x.shape[0], groups, -1)
    mean = grouped.mean(axis=-1, keepdims=True)
    var = grouped.var(axis=-1, keepdims=True)
    normalised = ((grouped - mean) / jnp.sqrt(var + eps)).reshape(x.shape)
    return normalised * weight[:, None] + bias[:, None]


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", "groups, weight, bias", "groups, bias, weight", "weight and bias swapped"),
    ("jax", "jnp.sqrt(var + eps)", "(jnp.sqrt(var) + eps)", "eps on the standard deviation"),
]
