"""Comparing values: `assert_close`, and the room of a computation in a dtype (its sensitivity
and its rounding, measured with the reference itself)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

from .backends import BACKENDS, _describe, to_numpy
from .core import (
    NUDGES,
    ROOM,
    ROUNDINGS,
    TOLERANCES,
    Function,
    Operands,
    Parameters,
    Tolerance,
    _reference,
)
from .targets import Target


def _check_type_dtype_device(
    actual: Any, expected_shape: tuple[int, ...], *, target: Target, what: str
) -> None:
    __tracebackhide__ = True
    if isinstance(actual, np.generic):
        pytest.fail(
            f"{what} returned a NumPy scalar ({type(actual).__name__}), not an array: "
            "return np.asarray(result) (NumPy reductions of a whole array return scalars)"
        )
    backend, dtype, device = _describe(actual)
    expected = BACKENDS[target.backend].arrays or target.backend
    if backend != expected:
        pytest.fail(f"{what} returned a {backend} array; expected {expected} (the input's)")
    if dtype != target.dtype:
        pytest.fail(f"{what} returned {dtype}; expected {target.dtype} (a silent dtype change?)")
    if device != target.device:
        pytest.fail(f"{what} returned an array on {device}; expected {target.device} (the input's)")
    if tuple(actual.shape) != tuple(expected_shape):
        pytest.fail(f"{what} returned shape {tuple(actual.shape)}; expected {expected_shape}")


@dataclass(frozen=True)
class Room:
    """What a computation in a dtype cannot do better, element by element (module docstring)."""

    room: NDArray[np.float64] | float = 0.0
    #: Where the reference run in the dtype loses an element (inf or NaN; finite in float64).
    overflows: NDArray[np.bool_] | bool = False


def assert_close(
    actual: Any,
    expected: Any,
    *,
    target: Target,
    what: str,
    tolerances: Mapping[str, Tolerance] | None = None,
    room: Room | NDArray[np.float64] | float = 0.0,
) -> None:
    """`actual` (an array of `target`) equals `expected` (any array) within the tolerance of
    the target's dtype (`tolerances` over `TOLERANCES`) and the `room` of the computation.

    Checks the array type, dtype, device and shape against the target's first; then the values,
    as the module docstring says. A failure names the worst element, its errors, and how many
    times the allowed error it is.
    """
    __tracebackhide__ = True
    if isinstance(expected, np.generic):
        pytest.fail(f"the reference for {what} returned a NumPy scalar: return np.asarray(result)")
    allowance = room if isinstance(room, Room) else Room(room)
    want = to_numpy(expected)
    _check_type_dtype_device(actual, want.shape, target=target, what=what)
    got = to_numpy(actual)
    tolerance = {**TOLERANCES, **(tolerances or {})}[target.dtype]
    largest = float(torch.finfo(getattr(torch, target.dtype)).max)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got - want)
        allowed = tolerance.atol + tolerance.rtol * np.abs(want) + allowance.room
        overflowed = (
            np.isinf(got)
            & (np.sign(got) == np.sign(want))
            & (np.abs(want) + allowance.room >= largest)
        )
        matches = (
            (error <= allowed)
            | (got == want)
            | (np.isnan(got) & np.isnan(want))
            | overflowed
            | allowance.overflows
        )
        if matches.all():
            return
        excess = np.where(matches, -np.inf, np.nan_to_num(error / allowed, nan=np.inf))
        worst = np.unravel_index(np.argmax(excess), got.shape)
        relative = error[worst] / np.abs(want[worst]) if want[worst] != 0 else np.inf
        room_there = float(np.broadcast_to(allowance.room, got.shape)[worst])
    pytest.fail(
        f"{what} differs from the float64 NumPy reference at {np.count_nonzero(~matches)} of "
        f"{got.size} elements (rtol={tolerance.rtol:g}, atol={tolerance.atol:g}).\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, expected "
        f"{float(want[worst])!r}: absolute error {error[worst]:.3g} (relative {relative:.3g}), "
        f"{excess[worst]:.3g} times the {allowed[worst]:.3g} allowed "
        f"(atol + rtol * |expected| + a rounding room of {room_there:.3g})"
    )


def _nudged(
    arguments: Operands, eps: float, rng: np.random.Generator, *, zeros: bool = False
) -> list[NDArray[Any]]:
    """The floating arguments, each element moved by a random relative amount up to `eps`; with
    `zeros`, also by up to `eps` times the operand's largest magnitude, so that zeros move too."""
    nudged = []
    for value in arguments:
        if value.dtype.kind != "f":
            nudged.append(value)
            continue
        moved = value * (1 + eps * rng.uniform(-1, 1, value.shape))
        if zeros and value.size:
            with np.errstate(invalid="ignore"):
                scale = np.nan_to_num(np.nanmax(np.abs(value), initial=0.0), posinf=0.0)
            moved = moved + eps * scale * rng.uniform(-1, 1, value.shape)
        nudged.append(np.asarray(moved))  # arithmetic on a 0-d array gives a NumPy scalar
    return nudged


def _finite(result: Any) -> NDArray[np.float64]:
    with np.errstate(invalid="ignore", over="ignore"):
        return to_numpy(result)


def _quietly(
    function: Function, arguments: Sequence[Any], parameters: Parameters
) -> NDArray[np.float64] | None:
    """The reference's result in float64, or None where it raises."""
    try:
        return _finite(_reference(function, arguments, parameters))
    except Exception:  # noqa: BLE001 - any refusal means the same here
        return None


class _Bfloat16(np.ndarray):
    """A float32 array whose every ufunc result (arithmetic, reductions, matmul, exp, ...) is
    rounded to bfloat16's 8 significant bits: the reference computing as bfloat16 hardware does,
    each operation in float32 then rounded, without a bfloat16 type in NumPy."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [_plain(value) for value in inputs]
        if "out" in kwargs:  # written into, then rounded: no second pass through this method
            kwargs["out"] = tuple(_plain(value) for value in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        rounded = tuple(_to_bfloat16(value) for value in results)
        return rounded if isinstance(result, tuple) else rounded[0]


def _plain(value: Any) -> Any:
    return value.view(np.ndarray) if isinstance(value, _Bfloat16) else value


def _to_bfloat16(value: Any) -> Any:
    """`value` rounded to the nearest bfloat16 (ties to even), as a `_Bfloat16` array; anything
    but a floating array as it is."""
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return value
    single = array.astype(np.float32)
    bits = single.view(np.uint32)
    with np.errstate(over="ignore"):
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isfinite(single), rounded.view(np.float32), single).view(_Bfloat16)


def _rounding(function: Function, arguments: Operands, parameters: Parameters, dtype: str) -> Room:
    """How far the reference run in `dtype` lands from its result in a wider dtype (module
    docstring): the largest error over `ROUNDINGS` inputs, and where `dtype` loses an element."""
    wider = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else None
    # (run in, compare with, scale the error by): float32 emulates bfloat16 and float64, whose
    # errors are the emulation's times the ratio of the epsilons; long double checks float64.
    native = dtype if dtype in {"float32", "float16"} else "float32"
    scale = float(torch.finfo(getattr(torch, dtype)).eps / np.finfo(native).eps)
    runs: list[tuple[Any, Any, float]] = [(np.dtype(native), np.dtype(np.float64), scale)]
    if dtype == "float64" and wider is not None:
        runs.append((np.dtype(np.float64), np.dtype(wider), 1.0))
    if dtype == "bfloat16":
        runs.append((_to_bfloat16, np.dtype(np.float64), 1.0))
    rng = np.random.default_rng(1)
    largest = np.zeros(())
    overflows = np.zeros((), dtype=bool)
    for low_dtype, high_dtype, factor in runs:
        for attempt in range(ROUNDINGS):
            # Nudges of many units in the last place: other roundings, the same conditioning.
            eps = 0.0 if attempt == 0 else 64 * _epsilon(low_dtype)
            rounded = [
                _cast(value, low_dtype) if value.dtype.kind == "f" else value
                for value in _nudged(arguments, eps, rng, zeros=True)
            ]
            low = _quietly(function, rounded, parameters)
            high = _quietly(
                function,
                [
                    value.view(np.ndarray).astype(high_dtype) if value.dtype.kind == "f" else value
                    for value in rounded
                ],
                parameters,
            )
            if low is None or high is None or low.shape != high.shape:
                continue  # a reference that refuses the dtype: no estimate from it
            error, lost = _apart(low, high)
            largest = np.maximum(largest, factor * error)
            if dtype != "float64":  # float32 has bfloat16's range, not float64's
                overflows = overflows | lost
    if dtype != "float64":
        # The float parameters as `dtype` holds them, the arithmetic exact: a value it cannot hold
        # (an eps of 1e-8 is 0 in float16) can decide an element where a port sums in float32, as
        # PyTorch and JAX do (a constant feature's variance exactly 0, then 0/0), while NumPy's
        # own float16 arithmetic, a little off, happens to keep it finite.
        low = _quietly(function, arguments, _held(parameters, dtype))
        high = _quietly(function, arguments, parameters)
        if low is not None and high is not None and low.shape == high.shape:
            error, lost = _apart(low, high)
            largest, overflows = np.maximum(largest, error), overflows | lost
    return Room(largest, overflows)


def _apart(low: NDArray[np.float64], high: NDArray[np.float64]) -> tuple[NDArray[np.float64], Any]:
    """How far a result computed with less lands from one computed with more, where both are
    finite; and where only the latter is (an element the lesser computation lost)."""
    with np.errstate(invalid="ignore"):
        both = np.isfinite(high) & np.isfinite(low)
        return np.where(both, np.abs(low - high), 0.0), np.isfinite(high) & ~np.isfinite(low)


def _held(parameters: Parameters, dtype: str) -> dict[str, Any]:
    """The float parameters rounded to `dtype`, as a port computes with them."""
    held = getattr(torch, dtype)
    return {
        name: torch.tensor(value, dtype=held).item() if type(value) is float else value
        for name, value in parameters.items()
    }


def _epsilon(dtype: Any) -> float:
    """The epsilon of a NumPy dtype, or of bfloat16 for `_to_bfloat16`."""
    return float(torch.finfo(torch.bfloat16).eps if dtype is _to_bfloat16 else np.finfo(dtype).eps)


def _cast(value: NDArray[Any], dtype: Any) -> Any:
    """`value` in a NumPy dtype, or rounded to bfloat16 by `_to_bfloat16`."""
    return dtype(value) if dtype is _to_bfloat16 else value.astype(dtype)


def _room(
    function: Function, arguments: Operands, parameters: Parameters, expected: Any, dtype: str
) -> Room:
    """`ROOM` times the larger of the reference's sensitivity and its rounding in `dtype`."""
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    want = to_numpy(expected)
    rng = np.random.default_rng(0)
    sensitivity = np.zeros(want.shape)
    for _ in range(NUDGES):
        with np.errstate(invalid="ignore", over="ignore"):
            change = np.abs(
                _finite(_reference(function, _nudged(arguments, eps, rng), parameters)) - want
            )
        # Both infinite (nan): the values must be equal. Only the nudged one: anything goes.
        sensitivity = np.maximum(sensitivity, np.nan_to_num(change, nan=0.0, posinf=np.inf))
    rounding = _rounding(function, arguments, parameters, dtype)
    room = ROOM * np.maximum(sensitivity, np.broadcast_to(rounding.room, want.shape))
    return Room(room, np.broadcast_to(rounding.overflows, want.shape))
