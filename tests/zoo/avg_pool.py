"""Mean pooling over non-overlapping windows of `stride` values, last axis: y_i = mean(x_(i s : (i + 1) s))."""

from __future__ import annotations

import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["avg_pool", "x:...n", "--size", "n: multiple of stride", "--param", "stride: int = 2"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}


def numpy(x, stride):
    n = x.shape[-1]
    return x.reshape(*x.shape[:-1], n // stride, stride).mean(axis=-1)


def pytorch(x, stride):
    n = x.shape[-1]
    pooled = torch.nn.functional.avg_pool1d(x.reshape(-1, 1, n), kernel_size=stride, stride=stride)
    return pooled.reshape(*x.shape[:-1], n // stride)


def jax(x, stride):
    n = x.shape[-1]
    return x.reshape(*x.shape[:-1], n // stride, stride).mean(axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "jax",
        "x.reshape(*x.shape[:-1], n // stride, stride).mean(axis=-1)",
        "x.reshape(*x.shape[:-1], stride, n // stride).mean(axis=-2)",
        "wrong grouping (strided, not contiguous)",
    ),
    (
        "pytorch",
        "kernel_size=stride, stride=stride",
        "kernel_size=stride, stride=1",
        "wrong stride (overlapping windows)",
    ),
]
