"""Comparing values: `assert_close`, and the room of a computation in a dtype (its sensitivity
and its rounding, measured with the reference itself)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

from .backends import BACKENDS, describe_array, to_numpy
from .core import (
    DISAGREE,
    NORMWISE,
    NUDGES,
    ROOM,
    ROUNDINGS,
    ROUNDINGS_AT_MOST,
    Function,
    Operands,
    Parameters,
    Tolerance,
    count_call,
    in_ulps,
    note_closeness,
    quiet,
    run_reference,
    tolerance_of,
)
from .targets import Target


def check_type_dtype_device(
    actual: Any, expected_shape: tuple[int, ...], *, target: Target, what: str
) -> None:
    __tracebackhide__ = True
    if isinstance(actual, np.generic):  # NumPy's arithmetic and ufuncs on a 0-d array give one
        actual = np.asarray(actual)
    backend, dtype, device = describe_array(actual)
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
    #: Where the dtype loses an element: the reference run in it answers inf or NaN (finite in
    #: float64), or one rounding moves the element by its whole size.
    lost: NDArray[np.bool_] | bool = False
    #: Why the dtype cannot hold the computation at all (empty: it can).
    broken: str = ""
    #: The reference's results where each zero of the inputs moves within the dtype's rounding
    #: (either sign, up to its smallest subnormal): the other side of a jump at a signed zero.
    sides: tuple[NDArray[np.float64], ...] = ()


@quiet
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
    allowance = room if isinstance(room, Room) else Room(room)
    want = to_numpy(expected)  # a NumPy scalar (a ufunc on a 0-d array) as a 0-d array
    check_type_dtype_device(actual, want.shape, target=target, what=what)
    got = to_numpy(actual)
    tolerance = tolerance_of(target.dtype, tolerances)
    largest = float(torch.finfo(getattr(torch, target.dtype)).max)
    allowed = tolerance.atol + tolerance.rtol * np.abs(want) + allowance.room

    def near(reference: NDArray[np.float64]) -> NDArray[np.bool_]:
        within = tolerance.atol + tolerance.rtol * np.abs(reference) + allowance.room
        return (
            (np.abs(got - reference) <= within)
            | (got == reference)
            | (np.isnan(got) & np.isnan(reference))
        )

    overflowed = (
        np.isinf(got) & (np.sign(got) == np.sign(want)) & (np.abs(want) + allowance.room >= largest)
    )
    # A room beyond float64 (near its largest value) holds no digit of the element: it is lost.
    matches = near(want) | overflowed | allowance.lost | ~np.isfinite(allowance.room)
    for side in allowance.sides:
        matches |= near(side)
    error = np.abs(got - want)
    if matches.all():
        beyond = overflowed | allowance.lost
        ulps = in_ulps(error, want, target.dtype, tolerance, ~np.broadcast_to(beyond, got.shape))
        note_closeness(got.size, _closest(error / allowed, beyond), ulps)
        return
    excess = np.where(matches, -np.inf, np.nan_to_num(error / allowed, nan=np.inf))
    worst = np.unravel_index(np.argmax(excess), got.shape)
    note_closeness(got.size, float(excess[worst]), in_ulps(error, want, target.dtype, tolerance))
    relative = error / np.abs(want)
    room_there = float(np.broadcast_to(allowance.room, got.shape)[worst])
    pytest.fail(
        f"{what} differs from the float64 NumPy reference at {np.count_nonzero(~matches)} of "
        f"{got.size} elements (rtol={tolerance.rtol:g}, atol={tolerance.atol:g}).\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, expected "
        f"{float(want[worst])!r}: absolute error {error[worst]:.3g} (relative "
        f"{relative[worst]:.3g}), {excess[worst]:.3g} times the {allowed[worst]:.3g} allowed "
        f"(atol + rtol * |expected| + a rounding room of {room_there:.3g})"
        + (
            _downcast(relative[~matches], target.dtype)
            or _library_accuracy(relative[~matches], target.dtype, tolerance)
        )
    )


def _closest(fraction: NDArray[np.float64], beyond: NDArray[np.bool_] | bool) -> float:
    """The largest error as a fraction of the allowed one, over elements that all match: one
    that matches only through a side of a jump or an unbounded room counts as 1 at most; one the
    dtype cannot hold (`beyond`: overflowed, or lost), or NaN where NaN is expected, as 0."""
    measured = np.where(beyond | np.isnan(fraction), 0.0, np.minimum(fraction, 1.0))
    return float(np.max(measured, initial=0.0))


#: The dtypes a port may silently compute in, narrower than the one a test checks.
NARROWER = {"float64": ("float32",), "float32": ("float16", "bfloat16")}
#: How close to a narrower dtype's epsilon (this factor either way) an error is named its rounding.
DOWNCAST = 16.0


def _downcast(relative: NDArray[np.float64], dtype: str) -> str:
    """Where the largest relative error of the elements that differ is within `DOWNCAST` of the
    epsilon of a dtype narrower than `dtype` (float32's in a float64 test: a swish whose sigmoid
    runs in float32 is 2.6e-8 off), the likely cause, a silent downcast, and never a tolerance:
    one that passed it would hide the bug."""
    finite = relative[np.isfinite(relative)]
    if not finite.size:
        return ""
    worst = float(np.max(finite))
    near = [
        name
        for name in NARROWER.get(dtype, ())
        if 1 / DOWNCAST <= worst / _epsilon(name) <= DOWNCAST
    ]
    if not near:
        return ""
    rounding = " or ".join(f"{name}'s (eps {_epsilon(name):.2g})" for name in near)
    names = " or ".join(near)
    return (
        f"\nThe elements that differ are off by a relative {worst:.2g} at most, about {rounding} "
        f"rounding in a {dtype} test: the port likely computes in {names} somewhere (a .float() "
        f"or .half(), a {names} constant or buffer, torch.get_default_dtype(), JAX without x64). "
        "Find the downcast: a looser tolerance would hide it."
    )


def _library_accuracy(relative: NDArray[np.float64], dtype: str, tolerance: Tolerance) -> str:
    """Where every element that differs is off by a small relative error (below a millionth),
    the `TOLERANCES` line that accepts it: a library function less exact than NumPy's or
    SciPy's (torch.special's Bessel functions, ~1e-9 in float64), which no port can beat."""
    worst = float(np.max(relative)) if relative.size else np.inf
    if not worst < 1e-6:
        return ""
    rtol = float(f"{2 * worst:.0e}")
    rtol = rtol if rtol >= 2 * worst else 2 * rtol
    return (
        f"\nEvery element that differs is within a relative {worst:.2g} of the reference: if the "
        "port calls a library function that is less exact than the reference's (PyTorch's "
        "special functions), that is the library's accuracy, which no port can beat; accept it "
        "in the test module, with the figure in a comment: TOLERANCES: dict[str, Tolerance] = "
        f"{ {dtype: Tolerance(rtol=rtol, atol=tolerance.atol)} }"
    )


def excused(room: Room, what: str) -> bool:
    """Whether the dtype holds no element of the call (`room.broken` says why), noted as such."""
    if room.broken and np.all(room.lost):
        count_call("excused", f"{what}: {room.broken}")
        return True
    return False


def nudge(
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


def _epsilon(dtype: str) -> float:
    """The machine epsilon of `dtype` (a torch dtype's name: bfloat16 too)."""
    return float(torch.finfo(getattr(torch, dtype)).eps)


def on_the_edge(
    function: Function, arguments: Operands, parameters: Parameters, dtype: str
) -> bool:
    """Whether the reference, which raises on `arguments`, does so at the edge of its domain,
    which a computation in `dtype` cannot tell from inside: a matrix it inverts on the way is
    beyond `dtype` (`_inverted_beyond`: a matrix singular as its elements round), or it returns
    on a copy of `arguments` nudged by the epsilon of `dtype` (zeros too)."""
    exact = _randomly_rounded(0.0)  # no rounding: only the inverted matrices are noted
    _RandomlyRounded.forget_matrices()
    noted = [
        exact(value.astype(np.float64)) if value.dtype.kind == "f" else value for value in arguments
    ]
    _quietly(function, noted, parameters)
    if _inverted_beyond(dtype):
        return True
    eps = _epsilon(dtype)
    rng = np.random.default_rng(0)
    return any(
        _quietly(function, nudge(arguments, eps, rng, zeros=True), parameters) is not None
        for _ in range(ROUNDINGS_AT_MOST)  # each matrix of a batch must land inside at once
    )


def _inverted_beyond(dtype: str) -> str:
    """Why the reference's runs since `forget_matrices` inverted a matrix that `dtype` cannot
    hold ("": they did not): ROOM times the first-order error of a stable inversion, condition *
    eps * |r|, would exceed |r|; or its inverse, which a gradient goes through, is beyond the
    dtype's largest value (a product of tiny numbers, such as a Gram matrix of 1e-160)."""
    eps, largest = _epsilon(dtype), float(torch.finfo(getattr(torch, dtype)).max)
    if ROOM * eps * _RandomlyRounded.condition >= 1:
        return (
            f"a matrix that it inverts has condition number {_RandomlyRounded.condition:.2g}, "
            f"beyond {dtype}'s 1 / (ROOM * eps) = {1 / (ROOM * eps):.2g}"
        )
    if _RandomlyRounded.smallest * largest < 1:
        return (
            "a matrix that it inverts has smallest singular value "
            f"{_RandomlyRounded.smallest:.2g}: its inverse is beyond {dtype}'s largest value"
        )
    return ""


def as_float64(result: Any) -> NDArray[np.float64]:
    with np.errstate(invalid="ignore", over="ignore"):
        return to_numpy(result)


def _quietly(
    function: Function, arguments: Sequence[Any], parameters: Parameters
) -> NDArray[np.float64] | None:
    """The reference's result in float64, or None where it raises."""
    try:
        return as_float64(run_reference(function, arguments, parameters))
    except Exception:  # noqa: BLE001 - any refusal means the same here
        return None


def _rounded(
    rounds: Callable[[Any], Any], ufunc: Any, method: str, inputs: Any, kwargs: Any
) -> Any:
    """A ufunc's result (arithmetic, reductions, matmul, exp, ...) on the plain arrays of
    `inputs`, each result then rounded by `rounds`: the reference computing as other arithmetic
    would."""
    plain = [_plain(value) for value in inputs]
    if "out" in kwargs:  # written into, then rounded: no second pass through this method
        kwargs["out"] = tuple(_plain(value) for value in kwargs["out"])
    result = getattr(ufunc, method)(*plain, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    rounded = tuple(rounds(value) for value in results)
    return rounded if isinstance(result, tuple) else rounded[0]


def _plain(value: Any) -> Any:
    return value.view(np.ndarray) if isinstance(value, _Bfloat16 | _RandomlyRounded) else value


class _Bfloat16(np.ndarray):
    """A float32 array whose every operation's result is rounded to bfloat16's 8 significant
    bits, as bfloat16 hardware computes (NumPy has no bfloat16 type)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _rounded(_to_bfloat16, ufunc, method, inputs, kwargs)


class _RandomlyRounded(np.ndarray):
    """A float64 array whose every operation's result is moved by a random relative amount up to
    `eps`: rounding in a dtype of that epsilon, in a random direction each time (Monte Carlo
    arithmetic). Unlike a real rounding, it breaks exact cancellations (``x - mean(x)`` of one
    value), as another order of the same operations, or a fused library kernel, does."""

    eps: ClassVar[float] = 0.0
    rng: ClassVar[np.random.Generator] = np.random.default_rng(2)
    #: The largest condition number and the smallest singular value of the matrices that the
    #: runs inverted (`_INVERTED`).
    condition: ClassVar[float] = 0.0
    smallest: ClassVar[float] = np.inf

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _rounded(_randomly, ufunc, method, inputs, kwargs)

    @classmethod
    def forget_matrices(cls) -> None:
        """Start noting inverted matrices afresh."""
        cls.condition, cls.smallest = 0.0, np.inf

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """A factorisation (LAPACK: `solve`, `cholesky`, `eigh`, ...) is backward stable in norm
        only: it answers exactly for its matrix moved by `eps` times that matrix's largest
        magnitude, an error that no rounding of its result shows (a solve whose pivots cancel)."""
        factors = getattr(func, "__module__", "") == "numpy.linalg" and func.__name__ in _FACTORED
        if not (factors and args):  # a matrix given by keyword is not moved
            return super().__array_function__(func, types, args, kwargs)
        matrix = np.asarray(_plain(args[0]))
        rest = [_plain(value) for value in args[1:]]
        with np.errstate(invalid="ignore"):
            scale = np.nan_to_num(np.max(np.abs(matrix), axis=(-2, -1), keepdims=True, initial=0))
            if func.__name__ in _INVERTED and matrix.size and np.isfinite(matrix).all():
                values = np.linalg.svd(matrix, compute_uv=False)  # largest first
                with np.errstate(divide="ignore"):
                    condition = float(np.max(values[..., 0] / values[..., -1]))
                _RandomlyRounded.condition = max(_RandomlyRounded.condition, condition)
                smallest = float(np.min(values[..., -1]))
                _RandomlyRounded.smallest = min(_RandomlyRounded.smallest, smallest)
        moved = matrix + _RandomlyRounded.eps * scale * _RandomlyRounded.rng.uniform(
            -1, 1, matrix.shape
        )
        result = func(moved, *rest, **kwargs)
        if not isinstance(result, tuple):
            return _randomly(result)
        parts = [_randomly(part) for part in result]
        return type(result)(*parts) if hasattr(result, "_fields") else tuple(parts)


#: NumPy's factorisations whose error grows with the condition number of their matrix, and the
#: others (stable at any condition); the matrix is the first argument, its last two axes.
_INVERTED = frozenset({"cholesky", "det", "inv", "slogdet", "solve"})
_STABLE = frozenset({"eig", "eigh", "eigvals", "eigvalsh", "lstsq", "pinv", "qr", "svd", "svdvals"})
_FACTORED = _INVERTED | _STABLE


def _randomly(value: Any) -> Any:
    """`value` moved as `_RandomlyRounded` says; anything but a floating array as it is."""
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return value
    nudge = _RandomlyRounded.rng.uniform(-1, 1, array.shape)
    return np.asarray(array * (1 + _RandomlyRounded.eps * nudge)).view(_RandomlyRounded)


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


@dataclass(frozen=True)
class _Run:
    """One way to run the reference with less precision: `cast` makes its floating inputs,
    `wider` the dtype of the result it is compared with, whose error is scaled by `factor`;
    `nudge`, the relative size of the nudges of the inputs; `own`: whether it computes in the
    target's dtype itself (its failures are that dtype's)."""

    cast: Callable[[NDArray[Any]], Any]
    wider: Any
    factor: float
    nudge: float
    own: bool


def _runs(dtype: str) -> list[_Run]:
    """The runs that measure the rounding of `dtype` (module docstring, "Values")."""
    eps = _epsilon(dtype)
    wider = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else None
    # float32 emulates bfloat16 and float64, whose errors are the emulation's times the ratio of
    # the epsilons; long double checks float64.
    native = dtype if dtype in {"float32", "float16"} else "float32"
    native_eps = float(np.finfo(native).eps)
    runs = [
        _Run(
            lambda value: value.astype(native),
            np.float64,
            eps / native_eps,
            64 * native_eps,
            native == dtype,
        ),
        _Run(_randomly_rounded(eps), np.float64, 1.0, 64 * eps, True),
    ]
    if dtype == "float64" and wider is not None:
        runs.append(_Run(lambda value: value.astype(np.float64), wider, 1.0, 64 * eps, True))
    if dtype == "bfloat16":
        runs.append(_Run(_to_bfloat16, np.float64, 1.0, 64 * eps, True))
    return runs


def _randomly_rounded(eps: float) -> Callable[[NDArray[Any]], Any]:
    def cast(value: NDArray[Any]) -> Any:
        _RandomlyRounded.eps = eps
        return value.astype(np.float64).view(_RandomlyRounded)

    return cast


def rounding_of(
    function: Function, arguments: Operands, parameters: Parameters, dtype: str
) -> Room:
    """How far the reference run with less precision lands from its result with more (module
    docstring), the largest error over its runs; where `dtype` loses an element; and why `dtype`
    cannot hold the computation, where a run in it raises or keeps no correct digit."""
    rng = np.random.default_rng(1)
    _RandomlyRounded.rng = np.random.default_rng(2)
    _RandomlyRounded.forget_matrices()
    largest = np.zeros(())
    lost = np.zeros((), dtype=bool)
    errors: list[float] = []  # each run's largest error
    scale = max(  # the largest magnitude of an input or of the result
        (float(np.max(np.abs(value[np.isfinite(value)]), initial=0.0)) for value in arguments),
        default=0.0,
    )
    broken = ""
    for attempt in range(ROUNDINGS_AT_MOST):
        if attempt >= ROUNDINGS and not _disagree(errors, scale, dtype):
            break
        for run in _runs(dtype):
            # Nudges of many units in the last place: other roundings, the same conditioning.
            rounded = [
                run.cast(value) if value.dtype.kind == "f" else value
                for value in nudge(arguments, run.nudge if attempt else 0.0, rng, zeros=True)
            ]
            low = _quietly(function, rounded, parameters)
            high = _quietly(
                function,
                [
                    value.view(np.ndarray).astype(run.wider) if value.dtype.kind == "f" else value
                    for value in rounded
                ],
                parameters,
            )
            if high is None or (low is not None and low.shape != high.shape):
                continue  # a reference that refuses these inputs: no estimate from them
            if low is None and run.own:
                broken = broken or f"the NumPy reference raises when it computes in {dtype}"
                lost = lost | (dtype != "float64")  # every element lost, as below
            if low is None:
                continue
            error, dropped = _apart(low, high)
            largest = np.maximum(largest, run.factor * error)
            with np.errstate(invalid="ignore"):
                scale = max(scale, float(np.max(np.abs(high[np.isfinite(high)]), initial=0.0)))
            errors.append(float(np.max(run.factor * error, initial=0.0)))
            if run.own and np.any(error >= np.abs(high)) and np.any(high):
                broken = broken or (
                    f"the NumPy reference computing in {dtype} keeps no correct digit"
                )
            if dtype != "float64":  # float32 has bfloat16's range, not float64's
                lost = lost | dropped
    if dtype != "float64":
        # The float parameters as `dtype` holds them, the arithmetic exact: a value it cannot hold
        # (an eps of 1e-8 is 0 in float16) can decide an element where a port sums in float32, as
        # PyTorch and JAX do (a constant feature's variance exactly 0, then 0/0), while NumPy's
        # own float16 arithmetic, a little off, happens to keep it finite.
        low = _quietly(function, arguments, _held(parameters, dtype))
        high = _quietly(function, arguments, parameters)
        if low is not None and high is not None and low.shape == high.shape:
            error, dropped = _apart(low, high)
            largest, lost = np.maximum(largest, error), lost | dropped
    beyond = _inverted_beyond(dtype)
    if beyond:
        # `dtype` keeps no digit of the call to compare, and the heavy tail of its error beyond
        # that is no bound at all.
        lost = np.ones((), dtype=bool)
        broken = beyond
    return Room(largest, lost, broken)


def _disagree(errors: list[float], scale: float, dtype: str) -> bool:
    """Whether the rounding runs so far disagree: the largest error is more than `DISAGREE`
    times their median, and more than a few units in the last place of `scale`, the largest
    input or result (below that, the tolerances and the room cover it)."""
    if not errors:
        return False  # every run refused its inputs: more runs would not agree or disagree
    eps = _epsilon(dtype)
    worst = max(errors)
    return worst > DISAGREE * float(np.median(errors)) and worst > 16 * eps * scale


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


def room_for(
    function: Function, arguments: Operands, parameters: Parameters, expected: Any, dtype: str
) -> Room:
    """`ROOM` times the larger of the reference's sensitivity and its rounding in `dtype`."""
    eps = _epsilon(dtype)
    want = to_numpy(expected)
    rng = np.random.default_rng(0)
    sensitivity = np.zeros(want.shape)
    for _ in range(NUDGES):
        nudged = _quietly(function, nudge(arguments, eps, rng), parameters)
        if nudged is None or nudged.shape != want.shape:
            continue  # at the edge of the reference's domain: the rounding runs tell
        with np.errstate(invalid="ignore", over="ignore"):
            change = np.abs(nudged - want)
        # Both infinite (nan): the values must be equal. Only the nudged one: anything goes.
        sensitivity = np.maximum(sensitivity, np.nan_to_num(change, nan=0.0, posinf=np.inf))
    # A port may compute another way than the reference (an FFT for a sum, a blocked matmul),
    # backward stable in norm only: its error is the change of nudges of epsilon times each
    # operand's largest magnitude, where the reference's own rounding is exact (zero terms).
    normwise = np.zeros(want.shape)
    for _ in range(NUDGES // 2):
        nudged = _quietly(function, nudge(arguments, eps, rng, zeros=True), parameters)
        if nudged is not None and nudged.shape == want.shape:
            with np.errstate(invalid="ignore", over="ignore"):
                change = np.nan_to_num(np.abs(nudged - want), nan=0.0, posinf=0.0)
            normwise = np.maximum(normwise, change)
    rounding = rounding_of(function, arguments, parameters, dtype)
    room = ROOM * np.maximum(sensitivity, np.broadcast_to(rounding.room, want.shape))
    room = np.maximum(room, NORMWISE * normwise)
    sides = _other_sides(function, arguments, parameters, want.shape, dtype)
    return Room(room, np.broadcast_to(rounding.lost, want.shape), rounding.broken, sides)


def _other_sides(
    function: Function,
    arguments: Operands,
    parameters: Parameters,
    shape: tuple[int, ...],
    dtype: str,
) -> tuple[NDArray[np.float64], ...]:
    """The reference's results with each zero of the floating inputs moved, at random, within
    the rounding of `dtype` around it: either sign, up to its smallest subnormal. A value whose
    input lies within rounding of a jump at a signed zero (NumPy's ``angle(-0.0)`` is pi,
    PyTorch's 0; ``atan2`` at (0, 0)) may be either side's: a small negative input rounds to
    -0.0 in float16, and which zero a port sees depends on its order of operations."""
    if not any(value.dtype.kind == "f" and not value.all() for value in arguments):
        return ()
    smallest = float(torch.finfo(getattr(torch, dtype)).smallest_normal) * _epsilon(dtype)
    rng = np.random.default_rng(4)
    sides = []
    for _ in range(NUDGES // 2):
        moved = [
            np.where(value == 0, smallest * rng.uniform(-1, 1, value.shape), value)
            if value.dtype.kind == "f"
            else value
            for value in arguments
        ]
        side = _quietly(function, moved, parameters)
        if side is not None and side.shape == shape:
            sides.append(side)
    return tuple(sides)
