"""What to compare: targets (a backend, a dtype and a device) as pytest parameters."""

from __future__ import annotations

import functools
import importlib.util
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

from .backends import BACKENDS, DEFAULT
from .core import DEVICES, DTYPES
from .triton_backend import interpreting


@dataclass(frozen=True)
class Target:
    """Where an implementation runs: a backend, a dtype and a device."""

    backend: str  # one of BACKENDS
    dtype: str  # one of DTYPES
    device: str = "cpu"  # one of DEVICES, or "meta" (PyTorch tensors without data)

    def __str__(self) -> str:
        return f"{self.backend}-{self.dtype}-{self.device}"

    def asarray(self, value: NDArray[Any]) -> Any:
        """`value` as an array of this target: floating point in its dtype, integers as they are."""
        dtype = self.dtype if np.issubdtype(value.dtype, np.floating) else None
        return BACKENDS[self.backend].asarray(value, dtype, self.device)


def targets(
    backends: Iterable[str] | None = None,
    dtypes: Iterable[str] = DTYPES,
    devices: Iterable[str] = DEVICES,
) -> list[Target]:
    """Every valid combination (of the `DEFAULT` backends by default; `ARRAY_API` for a shared
    implementation).

    Each backend runs on the devices and in the dtypes of its entry in `BACKENDS`: NumPy on the
    CPU in float32 and float16 (its float64 is the reference itself), PyTorch everywhere, in
    every dtype. Missing devices are skipped at run time, with the reason, by ``conftest.py``.
    """
    chosen = [backend for backend in backends or DEFAULT if backend in BACKENDS]
    return [
        Target(backend, dtype, device)
        for backend, dtype, device in itertools.product(chosen, dtypes, devices)
        if dtype in BACKENDS[backend].dtypes and device in BACKENDS[backend].devices
    ]


def over(
    backends: Iterable[str] | None = None,
    dtypes: Iterable[str] = DTYPES,
    devices: Iterable[str] = DEVICES,
) -> pytest.MarkDecorator:
    """``@parity.over(...)``: run the test once per target, as its `target` argument; an error
    where no backend of `BACKENDS` runs in those dtypes on those devices (a test without a target
    would pass having compared nothing)."""
    chosen = targets(backends, dtypes, devices)
    if not chosen:
        msg = (
            f"parity.over({backends!r}, {list(dtypes)!r}, {list(devices)!r}): no target; "
            f"the backends here are {list(BACKENDS)}, their dtypes and devices in BACKENDS"
        )
        raise ValueError(msg)
    return pytest.mark.parametrize("target", chosen, ids=str)


@functools.cache
def missing_backend(backend: str) -> str | None:
    """Why `backend` cannot run here (not installed), or None."""
    module = BACKENDS[backend].module or backend
    if importlib.util.find_spec(module) is None:
        return f"Requires: {module} (not installed; {BACKENDS[backend].install})"
    return None


@functools.cache
def missing_device(backend: str, device: str, dtype: str) -> str | None:
    """Why `device` is not usable for `backend` and `dtype` here, or None."""
    if backend in ("torch", "triton") and device == "cuda" and not torch.cuda.is_available():
        return "Requires: CUDA device (none found)"
    if backend == "triton" and device == "cpu" and not interpreting():
        return "Requires: TRITON_INTERPRET=1 before triton is imported (its interpreter, on CPU)"
    if backend == "triton" and device == "cuda" and interpreting():
        return "Requires: TRITON_INTERPRET unset (with it, the kernels run in the interpreter)"
    if backend == "torch" and device == "mps":
        if not torch.backends.mps.is_available():
            return "Requires: MPS device (none found)"
        if dtype == "float64":
            return "Requires: float64, which the MPS device does not support"
    if backend == "jax" and device == "cuda":
        import jax

        try:
            jax.devices("gpu")
        except RuntimeError:
            return "Requires: CUDA device for JAX (none found; is jax[cuda12] installed?)"
    return None
