"""1-D max pooling of the last axis over non-overlapping windows; a short tail is dropped."""

from __future__ import annotations

#: Arguments of `parity new` (name, operands NAME:AXES, --param options).
SCAFFOLD = ["max_pool1d", "x:...n", "--param", "window: int = 2"]
MIN_DIMS = 0
# The window (drawn in 1..n) must fit at least once.
SIDES = {"n": (1, 12)}
VALUES = {}
PARAMETERS = {}


def numpy(x, window):
    n_windows = x.shape[-1] // window
    trimmed = x[..., : n_windows * window]
    return trimmed.reshape(*x.shape[:-1], n_windows, window).max(axis=-1)


def pytorch(x, window):
    return x.unfold(-1, window, window).amax(dim=-1)


def jax(x, window):
    n_windows = x.shape[-1] // window
    windows = x[..., : n_windows * window].reshape(*x.shape[:-1], n_windows, window)
    return windows.max(axis=-1)


#: Planted bugs: (backend, exact text in that function's body, replacement, kind).
BUGS = [
    (
        "pytorch",
        "x.unfold(-1, window, window)",
        "x.unfold(-1, window, 1)",
        "wrong constant (stride 1)",
    ),
    ("jax", "windows.max(axis=-1)", "windows.mean(axis=-1)", "wrong reduction"),
]
