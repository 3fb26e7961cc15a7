"""Circular convolution through the FFT: y_i = sum_j x_j k_((i - j) mod n)."""

from __future__ import annotations

import numpy as np
import torch

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["fft_circular_conv", "x:...n", "kernel:...n"]
MIN_DIMS = 0
SIDES = {}
VALUES = {}
PARAMETERS = {}
# PyTorch has no FFT of float16 or bfloat16 on a CPU.
DTYPES = ("float32", "float64")


def numpy(x, kernel):
    n = x.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n  # index[i, j] = (i - j) mod n
    return np.einsum("...j,...ij->...i", x, kernel[..., index])


def pytorch(x, kernel):
    n = x.shape[-1]
    return torch.fft.irfft(torch.fft.rfft(x, dim=-1) * torch.fft.rfft(kernel, dim=-1), n=n, dim=-1)


def jax(x, kernel):
    import jax.numpy as jnp

    n = x.shape[-1]
    return jnp.fft.irfft(jnp.fft.rfft(x, axis=-1) * jnp.fft.rfft(kernel, axis=-1), n=n, axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    ("pytorch", ", n=n, dim=-1)", ", dim=-1)", "length lost (odd n)"),
    (
        "jax",
        "* jnp.fft.rfft(kernel, axis=-1)",
        "* jnp.conj(jnp.fft.rfft(kernel, axis=-1))",
        "wrong convention (correlation)",
    ),
]
