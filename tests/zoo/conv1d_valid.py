"""Valid 1-D cross-correlation (a conv layer's "convolution"): y_i = sum_j x_(i+j) kernel_j."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["conv1d_valid", "x:...n", "kernel:k"]
MIN_DIMS = 0
# A valid convolution needs the kernel to fit: 1 <= k <= n; the output has n - k + 1 values.
SIDES = {"k": (1, "n")}
VALUES = {}
PARAMETERS = {}


def numpy(x, kernel):
    windows = np.lib.stride_tricks.sliding_window_view(x, kernel.shape[-1], axis=-1)
    return windows @ kernel


def pytorch(x, kernel):
    n, k = x.shape[-1], kernel.shape[-1]
    # conv1d wants (batch, channels, length): fold the batch axes into one, one channel.
    out = torch.nn.functional.conv1d(x.reshape(-1, 1, n), kernel.reshape(1, 1, k))
    return out.reshape(*x.shape[:-1], n - k + 1)


def jax(x, kernel):
    import jax.numpy as jnp

    correlate = jnp.vectorize(lambda row: jnp.correlate(row, kernel, mode="valid"), signature="(n)->(m)")
    return correlate(x)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "kernel.reshape(1, 1, k)",
        "kernel.flip(-1).reshape(1, 1, k)",
        "wrong convention (flipped kernel)",
    ),
    ("jax", "jnp.correlate(row, kernel", "jnp.convolve(row, kernel", "wrong convention (convolve)"),
]
