"""The parity harness: every backend, dtype and device is compared with the NumPy reference.

An algorithm's test module declares what it draws (the shapes of its operands, its parameters);
the work happens here:

- `over()`, `targets()`: what to compare, as pytest parameters with ids such as
  ``torch-float32-cuda``. A target is a backend, a dtype and a device; ``conftest.py`` skips a
  target whose device is missing (or fails it, with ``--require-device``).
- `shapes()`, `operands()`, `arrays()`, `labels()`: hypothesis strategies for the inputs, with
  shapes related through dimension letters (``{"q": "...ld", "k": "...sd", "v": "...se"}``) and
  extreme values on request; `edge_shapes()` and `sized_shapes()` give fixed ones.
- `assert_matches_reference()`: the target's result against the float64 NumPy reference computed
  from the very same (rounded) inputs: array type, dtype, device, shape, then values. Where the
  reference raises (an empty reduction, say), the target must raise too.
- `assert_keeps_type_dtype_device()`: the same checks without values, for PyTorch's ``meta``
  device (tensors without data), which shows device mix-ups without a GPU.
- `assert_gradient_matches_reference()`: the gradient with respect to every floating operand
  against central differences of the NumPy reference: NumPy is the spec for gradients too.
- `assert_compiled_matches_eager()`, `assert_vmap_matches_loop()`: compiled and batched code
  gives the eager result, and compiles once.
- `assert_rejects_unsupported()`: a clear ``TypeError`` for lists, scalars, array-likes, integer
  arrays and operands from different backends.

Every helper takes the algorithm's operands as a tuple and its parameters as a dict, and its own
options keyword-only, so an algorithm's parameters may have any name (even ``tolerances``).

What each backend needs (make an array, read it back, name its dtype and device, take gradients,
compile) is in one table, `BACKENDS`, after the comparisons.

Tolerances
----------
A result `r` of a target with dtype `d` matches the float64 reference `e` element by element where

    |r - e| <= atol + rtol * |e| + SENSITIVITY * s

- ``rtol``, ``atol``: `TOLERANCES` [d], a few units in the last place of `d`: the rounding of each
  element-wise operation.
- ``s``: how far that element of the reference's result moves (the largest of `NUDGES` tries)
  when every floating input is nudged by a random relative amount up to the epsilon of `d`. That is
  the error a backward-stable computation in `d` commits on the terms it accumulates, so the room
  grows with the dtype's epsilon, with the number of terms each result sums (a matmul over k
  terms gets ~sqrt(k) times more) and with their size (large terms that cancel); element-wise
  functions get almost none.

A test overrides ``rtol`` and ``atol`` per dtype in one place, a module-level dict passed as
``tolerances=``, e.g. ``{"bfloat16": Tolerance(rtol=0.05, atol=0.01)}``.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import re
{%- if cookiecutter.jax %}
import sys
{%- endif %}
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

__all__ = [
    "DEVICES",
    "DTYPES",
    "GRADIENT_TOLERANCE",
    "PORTS",
    "SENSITIVITY",
    "TOLERANCES",
    "ArrayLike",
    "Target",
    "Tolerance",
    "arrays",
    "assert_close",
    "assert_compiled_matches_eager",
    "assert_gradient_matches_reference",
    "assert_keeps_type_dtype_device",
    "assert_matches_reference",
    "assert_rejects_unsupported",
    "assert_vmap_matches_loop",
    "edge_shapes",
    "labels",
    "missing_backend",
    "missing_device",
    "operands",
    "over",
    "shapes",
    "sized_shapes",
    "targets",
]

#: A public function of the package, e.g. ``softmax``.
Function = Callable[..., Any]
#: The operands of one call (float64 or integer NumPy arrays; targets convert them).
Operands = Sequence[NDArray[Any]]
#: The parameters of one call, passed by keyword: ``{"axis": 0}``.
Parameters = Mapping[str, Any]

DTYPES = ("float64", "float32", "float16", "bfloat16")
DEVICES = ("cpu", "cuda", "mps")


@dataclass(frozen=True)
class Tolerance:
    """`actual` matches `expected` where ``|actual - expected| <= atol + rtol * |expected|``
    (plus the accumulation room of the module docstring)."""

    rtol: float
    atol: float


#: Default tolerances per dtype of the target, for the rounding of element-wise operations: a
#: few units in the last place of float32/float16/bfloat16 (eps = 1.2e-7, 9.8e-4, 7.8e-3), and
#: tight for float64, where only the order of operations differs.
TOLERANCES: Mapping[str, Tolerance] = {
    "float64": Tolerance(rtol=1e-10, atol=1e-12),
    "float32": Tolerance(rtol=1e-5, atol=1e-6),
    "float16": Tolerance(rtol=5e-3, atol=1e-3),
    "bfloat16": Tolerance(rtol=4e-2, atol=1e-2),
}
#: How many times the reference's own sensitivity to rounding a target may err by: the port
#: rounds every intermediate result too (seen: 10x for attention in bfloat16).
SENSITIVITY = 16.0
#: Random nudges of the inputs that measure that sensitivity (the largest change counts).
NUDGES = 8

#: Float64 gradients against central differences, whose own error is ~1e-10.
GRADIENT_TOLERANCE = Tolerance(rtol=1e-6, atol=1e-8)


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
    """Every valid combination (of all backends by default).

    Each backend runs on the devices and in the dtypes of its entry in `BACKENDS`: NumPy on the
    CPU in float32 and float16 (its float64 is the reference itself), PyTorch everywhere, in
    every dtype. Missing devices are skipped at run time, with the reason, by ``conftest.py``.
    """
    return [
        Target(backend, dtype, device)
        for backend, dtype, device in itertools.product(backends or BACKENDS, dtypes, devices)
        if dtype in BACKENDS[backend].dtypes and device in BACKENDS[backend].devices
    ]


def over(
    backends: Iterable[str] | None = None,
    dtypes: Iterable[str] = DTYPES,
    devices: Iterable[str] = DEVICES,
) -> pytest.MarkDecorator:
    """``@parity.over(...)``: run the test once per target, as its `target` argument."""
    return pytest.mark.parametrize("target", targets(backends, dtypes, devices), ids=str)


# --- What is missing on this machine --------------------------------------------------------


@functools.cache
def missing_backend(backend: str) -> str | None:
    """Why `backend` cannot run here (not installed), or None."""
    if importlib.util.find_spec(backend) is None:
        return f"Requires: {backend} (not installed; pip install -e '.[{backend}]')"
    return None


@functools.cache
def missing_device(backend: str, device: str, dtype: str) -> str | None:
    """Why `device` is not usable for `backend` and `dtype` here, or None."""
    if backend == "torch" and device == "cuda" and not torch.cuda.is_available():
        return "Requires: CUDA device (none found)"
    if backend == "torch" and device == "mps":
        if not torch.backends.mps.is_available():
            return "Requires: MPS device (none found)"
        if dtype == "float64":
            return "Requires: float64, which the MPS device does not support"
{%- if cookiecutter.jax %}
    if backend == "jax" and device == "cuda":
        import jax

        try:
            jax.devices("gpu")
        except RuntimeError:
            return "Requires: CUDA device for JAX (none found; is jax[cuda12] installed?)"
{%- endif %}
    return None


# --- Inputs ---------------------------------------------------------------------------------


def _parse(spec: Mapping[str, str]) -> dict[str, tuple[bool, str]]:
    """Each operand's ("..." present, dimension letters), checked."""
    parsed = {}
    for name, dims in spec.items():
        if not re.fullmatch(r"(\.\.\.)?[a-z]*", dims):
            msg = f"shape of {name!r} is {dims!r}; write '...' (batch axes) then letters: '...ld'"
            raise ValueError(msg)
        parsed[name] = (dims.startswith("..."), dims.removeprefix("..."))
    return parsed


def _build(
    spec: Mapping[str, str], batch: tuple[int, ...], sides: Mapping[str, int]
) -> dict[str, tuple[int, ...]]:
    return {
        name: (batch if has_batch else ()) + tuple(sides[letter] for letter in letters)
        for name, (has_batch, letters) in _parse(spec).items()
    }


def _letters(spec: Mapping[str, str]) -> list[str]:
    return list(dict.fromkeys("".join(letters for _, letters in _parse(spec).values())))


def shapes(
    target: Target,
    spec: Mapping[str, str],
    *,
    min_dims: int = 0,
    max_dims: int = 3,
    max_side: int = 5,
) -> st.SearchStrategy[dict[str, tuple[int, ...]]]:
    """The shapes of related operands: `spec` maps each operand to its axes.

    ``"..."`` stands for batch axes shared by every operand that has them (`min_dims` to
    `max_dims` of them, 0 meaning a 0-d operand), and each letter for one axis, the same size
    wherever the letter appears: ``{"x": "...", "y": "..."}`` (one shared shape),
    ``{"logits": "...c", "labels": "..."}``, ``{"q": "...ld", "k": "...sd", "v": "...se"}``.
    Sides lie in 1 to `max_side`; `edge_shapes` has the empty ones.
    """
    letters = _letters(spec)
{%- if cookiecutter.jax %}
    if target.backend == "jax":
        count = min(max(len(JAX_BATCH), min_dims), max_dims)
        batch = (JAX_BATCH * count)[:count]
        return st.just(_build(spec, batch, {letter: 2 + i for i, letter in enumerate(letters)}))
{%- else %}
    del target  # with JAX, its targets keep to fixed shapes
{%- endif %}
    batches = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, max_side=max_side)
    sides = st.fixed_dictionaries({letter: st.integers(1, max_side) for letter in letters})
    return st.tuples(batches, sides).map(lambda drawn: _build(spec, *drawn))


def edge_shapes(spec: Mapping[str, str], *, min_dims: int = 0) -> dict[str, dict[str, Any]]:
    """Two fixed cases for `spec`: "smallest" (sides of 1; 0-d operands where `min_dims` is 0)
    and "empty" (every side 0)."""
    letters = _letters(spec)
    return {
        "smallest": _build(spec, (1,) * min_dims, dict.fromkeys(letters, 1)),
        "empty": _build(spec, (0,) * max(min_dims, 1), dict.fromkeys(letters, 0)),
    }


def sized_shapes(
    spec: Mapping[str, str], size: int, *, min_dims: int = 0
) -> dict[str, tuple[int, ...]]:
    """Fixed shapes for `spec` with about `size` elements in the largest operand: two axes or
    more, every side the same."""
    parsed = _parse(spec).values()
    count = max(min_dims, 2 - max(len(letters) for _, letters in parsed))
    axes = count + max(len(letters) for _, letters in parsed)
    side = max(1, round(size ** (1 / axes)))
    return _build(spec, (side,) * count, dict.fromkeys(_letters(spec), side))


def arrays(
    target: Target, shape: tuple[int, ...], *, extremes: bool = False
) -> st.SearchStrategy[NDArray[np.float64]]:
    """Float64 arrays of `shape`, for `target` to convert.

    Values lie in [-10, 10]; with `extremes`, also huge ones and tiny ones, near the smallest
    normal number of the target's dtype. Huge means up to 1e4 in magnitude (exp overflows from
    89 in float32 and 710 in float64), but at most 1/sqrt(eps) of the dtype, beyond which the
    product of two values has no digit left for a difference of 1 (float16: 32, bfloat16: 11).
    """
    values = st.floats(-10.0, 10.0)
    if extremes:
        limits = torch.finfo(getattr(torch, target.dtype))
        huge, tiny = min(1e4, float(limits.eps) ** -0.5), 1e3 * float(limits.tiny)
        values = st.one_of(values, st.floats(-huge, huge), st.floats(-tiny, tiny))
    return hnp.arrays(np.float64, shape, elements=values)


def operands(
    target: Target,
    spec: Mapping[str, str],
    *,
    extremes: bool = False,
    min_dims: int = 0,
    max_dims: int = 3,
    max_side: int = 5,
) -> st.SearchStrategy[tuple[NDArray[np.float64], ...]]:
    """One float64 array per operand of `spec`, in its order, with `shapes` as declared."""
    drawn = shapes(target, spec, min_dims=min_dims, max_dims=max_dims, max_side=max_side)
    return drawn.flatmap(
        lambda found: st.tuples(*(arrays(target, found[name], extremes=extremes) for name in spec))
    )


def labels(shape: tuple[int, ...], classes: int) -> st.SearchStrategy[NDArray[np.int64]]:
    """Integer class labels in [0, classes) of the given shape."""
    return hnp.arrays(np.int64, shape, elements=st.integers(0, classes - 1))


# --- Comparisons ----------------------------------------------------------------------------


def to_numpy(array: Any) -> NDArray[Any]:
    """A NumPy copy of an array of any backend; floating point in float64 (exact for all)."""
    backend = BACKENDS.get(_describe(array)[0])
    result = backend.to_numpy(array) if backend else np.asarray(array)
    if np.issubdtype(result.dtype, np.floating) or result.dtype.name == "bfloat16":
        return result.astype(np.float64)
    return result


def _describe(array: Any) -> tuple[str, str, str]:
    """The backend, dtype and device of `array`, named as in `Target`; the backend is the type's
    name for anything else."""
    for name, backend in BACKENDS.items():
        found = backend.describe(array)
        if found is not None:
            return (name, *found)
    return type(array).__name__, "?", "?"


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
    if backend != target.backend:
        pytest.fail(f"{what} returned a {backend} array; expected {target.backend} (the input's)")
    if dtype != target.dtype:
        pytest.fail(f"{what} returned {dtype}; expected {target.dtype} (a silent dtype change?)")
    if device != target.device:
        pytest.fail(f"{what} returned an array on {device}; expected {target.device} (the input's)")
    if tuple(actual.shape) != tuple(expected_shape):
        pytest.fail(f"{what} returned shape {tuple(actual.shape)}; expected {expected_shape}")


def assert_close(
    actual: Any,
    expected: Any,
    *,
    target: Target,
    what: str,
    tolerances: Mapping[str, Tolerance] | None = None,
    room: NDArray[np.float64] | float = 0.0,
) -> None:
    """`actual` (an array of `target`) equals `expected` (any array) within the tolerance of
    the target's dtype (`tolerances` over `TOLERANCES`).

    Checks the array type, dtype, device and shape against the target's first. Values match
    where ``|actual - expected| <= atol + rtol * |expected| + room``, or where both are the same
    infinity or both NaN. A failure names the worst element and its errors.
    """
    __tracebackhide__ = True
    if isinstance(expected, np.generic):
        pytest.fail(f"the reference for {what} returned a NumPy scalar: return np.asarray(result)")
    want = to_numpy(expected)
    _check_type_dtype_device(actual, want.shape, target=target, what=what)
    got = to_numpy(actual)
    tolerance = {**TOLERANCES, **(tolerances or {})}[target.dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got - want)
        allowed = tolerance.atol + tolerance.rtol * np.abs(want) + room
        matches = (error <= allowed) | (got == want) | (np.isnan(got) & np.isnan(want))
        if matches.all():
            return
        excess = np.where(matches, -np.inf, np.nan_to_num(error - allowed, nan=np.inf))
        worst = np.unravel_index(np.argmax(excess), got.shape)
        relative = error[worst] / np.abs(want[worst]) if want[worst] != 0 else np.inf
    pytest.fail(
        f"{what} differs from the float64 NumPy reference at {np.count_nonzero(~matches)} of "
        f"{got.size} elements (rtol={tolerance.rtol:g}, atol={tolerance.atol:g}).\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, expected "
        f"{float(want[worst])!r} (absolute error {error[worst]:.3g}, relative error {relative:.3g}"
        f"; rounding room {np.broadcast_to(room, got.shape)[worst]:.3g})"
    )


def _reference(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    """`function` on NumPy arrays, its floating-point warnings silenced: the values tell (and
    some BLAS builds raise spurious ones)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*arguments, **parameters)


def _room(
    function: Function, arguments: Operands, parameters: Parameters, expected: Any, dtype: str
) -> NDArray[np.float64]:
    """`SENSITIVITY` times the reference's largest change, element by element, when every
    floating input is nudged by up to one epsilon of `dtype` (see the module docstring)."""
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    rng = np.random.default_rng(0)
    want = to_numpy(expected)
    largest = np.zeros(want.shape)
    for _ in range(NUDGES):
        # np.asarray: arithmetic on a 0-d array gives a NumPy scalar, which no function accepts.
        nudged = [
            np.asarray(value * (1 + eps * rng.uniform(-1, 1, value.shape)))
            if value.dtype.kind == "f"
            else value
            for value in arguments
        ]
        with np.errstate(invalid="ignore", over="ignore"):
            change = np.abs(to_numpy(_reference(function, nudged, parameters)) - want)
        # Both infinite (nan): the values must be equal. Only the nudged one: anything goes.
        largest = np.maximum(largest, np.nan_to_num(change, nan=0.0, posinf=np.inf))
    return SENSITIVITY * largest


def assert_matches_reference(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """`function` on `target` matches `function` on float64 NumPy copies of the same operands.

    The operands are converted to the target first, so the reference sees exactly the values
    the target sees (rounded to its dtype), computed in float64; see the module docstring for
    the tolerance. Where the reference raises, the target must raise too (any exception: each
    backend words an empty reduction its own way).
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    arguments = [target.asarray(value) for value in operands]
    reference_arguments = [to_numpy(argument) for argument in arguments]
    what = f"{function.__name__} on {target}"
    try:
        expected = _reference(function, reference_arguments, parameters)
    except NotImplementedError:
        raise
    # Any error of the reference is part of the spec.
    except Exception as error:  # noqa: BLE001
        _assert_raises_too(function, target, arguments, parameters, error, what)
        return
    actual = BACKENDS[target.backend].call(function, arguments, parameters)
    room = _room(function, reference_arguments, parameters, expected, target.dtype)
    assert_close(actual, expected, target=target, what=what, tolerances=tolerances, room=room)


def _assert_raises_too(
    function: Function,
    target: Target,
    arguments: Sequence[Any],
    parameters: Parameters,
    error: Exception,
    what: str,
) -> None:
    __tracebackhide__ = True
    try:
        result = BACKENDS[target.backend].call(function, arguments, parameters)
    except NotImplementedError:
        raise
    # Raised: which exception is each backend's own choice.
    except Exception:  # noqa: BLE001
        return
    shape = tuple(getattr(result, "shape", ()))
    pytest.fail(
        f"{what} returned a result of shape {shape} where the NumPy reference raises "
        f"{type(error).__name__}: {error}"
    )


def assert_keeps_type_dtype_device(
    function: Function, target: Target, operands: Operands, parameters: Parameters | None = None
) -> None:
    """`function` on `target` returns the target's array type, dtype and device, and the
    reference's shape; values are not compared (on the ``meta`` device there are none)."""
    __tracebackhide__ = True
    parameters = parameters or {}
    expected = function(*operands, **parameters)
    actual = function(*[target.asarray(value) for value in operands], **parameters)
    what = f"{function.__name__} on {target}"
    _check_type_dtype_device(actual, np.shape(expected), target=target, what=what)


# --- Gradients ------------------------------------------------------------------------------


def numerical_gradient(
    function: Callable[[NDArray[np.float64]], float], x: NDArray[np.float64], step: float = 6e-6
) -> NDArray[np.float64]:
    """Central differences: (f(x + h e_i) - f(x - h e_i)) / 2h for each element i of `x`.

    The step balances truncation error (~h^2) against rounding error (~eps/h) in float64:
    h ~ eps^(1/3) relative to |x_i|, for an error of ~1e-10.
    """
    gradient = np.empty_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        h = step * max(1.0, abs(float(x[index])))
        up[index] += h
        down[index] -= h
        gradient[index] = (function(up) - function(down)) / (up[index] - down[index])
    return gradient


def assert_gradient_matches_reference(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    wrt: Sequence[int] | None = None,
) -> None:
    """The gradient of ``sum(w * function(...))``, with fixed random weights w, with respect to
    each operand in `wrt` (by position; default: every floating one) matches central
    differences of the float64 NumPy reference, within `GRADIENT_TOLERANCE`.

    Each of the backend's ways to take gradients is checked (its ``gradients`` in `BACKENDS`;
    PyTorch: ``torch.autograd.grad`` and ``torch.func.grad``), then, on PyTorch, ``gradcheck``
    of the whole Jacobian. Use a float64 target.
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    reference = [np.asarray(value) for value in operands]
    if wrt is None:
        wrt = [i for i, value in enumerate(reference) if value.dtype.kind == "f"]
    weights = np.random.default_rng(0).standard_normal(np.shape(function(*reference, **parameters)))
    gradients = BACKENDS[target.backend].gradients
    if gradients is None:
        pytest.fail(f"no gradients on {target.backend}")
    arguments = [target.asarray(value) for value in reference]
    found = gradients(function, arguments, list(wrt), weights, parameters)
    for position in wrt:

        def loss(x: NDArray[np.float64], position: int = position) -> float:
            changed = [*reference[:position], x, *reference[position + 1 :]]
            return float(np.sum(weights * function(*changed, **parameters)))

        expected = numerical_gradient(loss, reference[position])
        for method, gradient in found[position].items():
            what = f"the {method} gradient of {function.__name__} for operand {position}"
            if gradient is None:
                pytest.fail(
                    f"{what} on {target} is missing: the port cuts the graph of that operand "
                    "(.detach(), .item(), .numpy(), torch.tensor(...), an in-place write)"
                )
            assert_close(
                gradient,
                expected,
                target=target,
                tolerances={target.dtype: GRADIENT_TOLERANCE},
                what=f"{what} on {target}",
            )
    if target.backend == "torch":  # torch's own finite differences, for every output
        torch.autograd.gradcheck(
            lambda *chosen: function(*_replace(arguments, wrt, chosen), **parameters),
            tuple(arguments[position].detach().requires_grad_() for position in wrt),
        )


def _replace(
    arguments: Sequence[Any], positions: Sequence[int], values: Sequence[Any]
) -> list[Any]:
    """`arguments` with those at `positions` replaced by `values`."""
    replaced = list(arguments)
    for position, value in zip(positions, values, strict=True):
        replaced[position] = value
    return replaced


# --- Transformations: compile, vmap ---------------------------------------------------------


def assert_compiled_matches_eager(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    compiler: str = "aot_eager",
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """`function` compiled as one whole graph gives the eager result, and is compiled once
    for two calls with different values of the same shapes and dtypes.

    PyTorch: ``torch.compile(fullgraph=True)``, so any graph break is an error. The default
    `compiler`, ``aot_eager``, traces the forward and backward graphs as inductor would but
    skips code generation (a second instead of half a minute on a CPU); pass
    ``compiler="inductor"`` for the real thing. Other backends compile their own way (their
    ``compile`` in `BACKENDS`).
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    calls = [
        [target.asarray(value) for value in operands],
        [target.asarray(_other_values(value)) for value in operands],
    ]
    eager = [function(*arguments, **parameters) for arguments in calls]  # errors raise here
    compile_ = BACKENDS[target.backend].compile
    if compile_ is None:
        pytest.fail(f"no compiler for {target.backend}")
    compiled, count, how = compile_(functools.partial(function, **parameters), compiler)
    name = f"{how} of {function.__name__} on {target}"
    for arguments, expected in zip(calls, eager, strict=True):
        assert_close(
            compiled(*arguments),
            expected,
            target=target,
            tolerances=tolerances,
            what=name,
        )
    if count() != 1:
        pytest.fail(
            f"{name} compiled {count()} times for two calls with the same shapes and dtypes: a "
            "guard failed on the second call (a changing Python value, .item(), a branch on data?)"
        )


def _other_values(value: NDArray[Any]) -> NDArray[Any]:
    """New values of the same shape and dtype (integers, e.g. labels, are kept)."""
    return np.asarray(0.5 * value + 0.25) if np.issubdtype(value.dtype, np.floating) else value


def assert_vmap_matches_loop(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """``torch.func.vmap`` of `function` over the leading axis of every operand equals
    `function` applied to each slice, stacked."""
    __tracebackhide__ = True
    parameters = parameters or {}
    arguments = [target.asarray(value) for value in operands]
    looped = torch.stack(
        [function(*slices, **parameters) for slices in zip(*arguments, strict=True)]
    )
    batched = torch.func.vmap(functools.partial(function, **parameters))(*arguments)
    assert_close(
        batched,
        looped,
        target=target,
        tolerances=tolerances,
        what=f"torch.func.vmap of {function.__name__} on {target}",
    )


# --- Refused inputs -------------------------------------------------------------------------


class ArrayLike:
    """Converts to an array with ``numpy.asarray`` but is not one, like a pandas object."""

    def __init__(self, values: NDArray[Any]) -> None:
        self.values = values

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        return self.values if dtype is None else self.values.astype(dtype)


def assert_rejects_unsupported(
    function: Function, operands: Operands, parameters: Parameters | None = None
) -> None:
    """`function` raises a ``TypeError`` that names the problem and what to pass instead:

    - for each operand replaced by a list, a Python float or an `ArrayLike`;
    - for each floating operand replaced by integers, on every backend (each would promote
      them differently, so the package refuses them);
    - with several operands, for operands from two backends (naming both).
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    name = function.__name__
    available = [backend for backend in BACKENDS if missing_backend(backend) is None]
    for position, value in enumerate(operands):
        wrong_values = [(value.tolist(), "list"), (1.0, "float"), (ArrayLike(value), "ArrayLike")]
        for wrong, type_name in wrong_values:
            arguments = _replace(operands, [position], [wrong])
            with pytest.raises(TypeError, match=rf"{name}\(\) got .*{type_name}.*; expected numpy"):
                function(*arguments, **parameters)
        if value.dtype.kind != "f":
            continue
        for backend in available:
            make = Target(backend, "float64").asarray
            arguments = [make(item) for item in _replace(operands, [position], [value.astype(int)])]
            with pytest.raises(TypeError, match=rf"{name}\(\) got .*int.*; expected floating"):
                function(*arguments, **parameters)
    for first, rest in itertools.permutations(available, 2) if len(operands) > 1 else []:
        arguments = [Target(first, "float64").asarray(operands[0])]
        arguments += [Target(rest, "float64").asarray(value) for value in operands[1:]]
        with pytest.raises(TypeError, match=re.escape("different backends")) as raised:
            function(*arguments, **parameters)
        for backend in (first, rest):
            assert backend in str(raised.value), f"{raised.value} does not name {backend}"


# --- The backends ---------------------------------------------------------------------------

#: ``gradients(function, arguments, wrt, weights, parameters)``: for each position in `wrt`,
#: method name -> gradient (None where the graph was cut) of ``sum(weights * function(...))``.
Gradients = Callable[
    [Function, list[Any], list[int], NDArray[np.float64], Parameters], dict[int, dict[str, Any]]
]
#: ``compile(function, compiler)``: the compiled function, how many times it compiled so far,
#: and how it was compiled (for messages).
Compile = Callable[[Function, str], tuple[Function, Callable[[], int], str]]


def _call(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    return function(*arguments, **parameters)


@dataclass(frozen=True)
class Backend:
    """What the harness needs to know about one array library."""

    dtypes: tuple[str, ...]  # the dtypes its targets run in
    devices: tuple[str, ...]  # the devices its targets run on
    #: ``asarray(values, dtype, device)``: a float64 or integer NumPy array as this backend's
    #: array, floating point in `dtype` (None: integers, kept as they are).
    asarray: Callable[[NDArray[Any], str | None, str], Any]
    to_numpy: Callable[[Any], NDArray[Any]]  # a NumPy copy, any dtype
    describe: Callable[[Any], tuple[str, str] | None]  # (dtype, device), or None: not ours
    #: ``call(function, arguments, parameters)``: the function on arrays of this backend.
    call: Callable[[Function, Sequence[Any], Parameters], Any] = _call
    gradients: Gradients | None = None
    compile: Compile | None = None


def _numpy_asarray(values: NDArray[Any], dtype: str | None, device: str) -> NDArray[Any]:
    del device  # NumPy arrays live on the CPU
    return values.astype(dtype) if dtype else values.copy()


def _numpy_describe(array: Any) -> tuple[str, str] | None:
    return (array.dtype.name, "cpu") if isinstance(array, np.ndarray) else None


def _torch_asarray(values: NDArray[Any], dtype: str | None, device: str) -> torch.Tensor:
    return torch.tensor(values, dtype=getattr(torch, dtype) if dtype else None, device=device)


def _torch_to_numpy(array: torch.Tensor) -> NDArray[Any]:
    array = array.detach().cpu()
    converted: NDArray[Any] = (array.double() if array.is_floating_point() else array).numpy()
    return converted


def _torch_describe(array: Any) -> tuple[str, str] | None:
    if not isinstance(array, torch.Tensor):
        return None
    return str(array.dtype).removeprefix("torch."), array.device.type


def _torch_gradients(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    parameters: Parameters,
) -> dict[int, dict[str, Any]]:
    chosen = [arguments[position].requires_grad_() for position in wrt]
    first = chosen[0]
    w = torch.as_tensor(weights, dtype=first.dtype, device=first.device)

    def loss(*values: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = function(*_replace(arguments, wrt, values), **parameters)
        return (w * result).sum()

    value = loss(*chosen)
    autograd = (
        torch.autograd.grad(value, chosen, allow_unused=True)
        if value.requires_grad
        else [None] * len(chosen)
    )
    func = torch.func.grad(loss, argnums=tuple(range(len(chosen))))(*[x.detach() for x in chosen])
    return {
        position: {"torch.autograd": by_autograd, "torch.func.grad": by_func}
        for position, by_autograd, by_func in zip(wrt, autograd, func, strict=True)
    }


def _torch_compile(function: Function, compiler: str) -> tuple[Function, Callable[[], int], str]:
    import torch._dynamo
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend(compiler)
    compiled = torch.compile(function, backend=counter, fullgraph=True)
    return compiled, lambda: counter.frame_count, f"torch.compile(backend={compiler!r})"
{%- if cookiecutter.jax %}


# JAX compiles every operation anew for each input shape (tens of ms each on a CPU), so
# hypothesis draws the values of JAX inputs but keeps to fixed shapes: batch axes `JAX_BATCH`,
# and sizes 2, 3, 4, ... for the dimension letters.
JAX_BATCH = (2, 3)
# JAX's float16 and bfloat16 work on CPU but cost a second of compilation per algorithm:
# add them here when they matter to you.
JAX_DTYPES = ("float64", "float32")


def _jax_asarray(values: NDArray[Any], dtype: str | None, device: str) -> Any:
    import jax
    import jax.numpy as jnp

    platform = "gpu" if device == "cuda" else device
    converted = values.astype(jnp.dtype(dtype)) if dtype else values
    return jax.device_put(converted, jax.devices(platform)[0])


def _jax_call(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    """Through `jax.jit`, compiled once per function, parameters and shapes: eager JAX compiles
    every operation separately for each new shape (tens of ms each on a CPU), jitted JAX the
    whole function at once. `assert_compiled_matches_eager` checks that both agree."""
    return _jitted(function, tuple(sorted(parameters.items())))(*arguments)


@functools.cache
def _jitted(function: Function, parameters: tuple[tuple[str, Any], ...]) -> Function:
    import jax

    return jax.jit(functools.partial(function, **dict(parameters)))


def _jax_describe(array: Any) -> tuple[str, str] | None:
    jax = sys.modules.get("jax")  # never imported here: a JAX array means JAX is loaded
    if jax is None or not isinstance(array, jax.Array):
        return None
    platform = next(iter(array.devices())).platform
    return array.dtype.name, "cuda" if platform == "gpu" else platform


def _jax_gradients(
    function: Function,
    arguments: list[Any],
    wrt: list[int],
    weights: NDArray[np.float64],
    parameters: Parameters,
) -> dict[int, dict[str, Any]]:
    """``jax.grad``, under ``jax.jit`` (see `_jax_call`)."""
    import jax

    first = arguments[wrt[0]]
    w = jax.device_put(weights.astype(first.dtype), next(iter(first.devices())))
    gradient = _jax_gradient(function, tuple(wrt), tuple(sorted(parameters.items())))
    found = gradient(w, *arguments)
    return {position: {"jax.grad": value} for position, value in zip(wrt, found, strict=True)}


@functools.cache
def _jax_gradient(
    function: Function, wrt: tuple[int, ...], parameters: tuple[tuple[str, Any], ...]
) -> Function:
    """`jax.jit(jax.grad(...))` of ``sum(w * function(*arguments))``, compiled once per shape."""
    import jax
    import jax.numpy as jnp

    def loss(w: jax.Array, *arguments: jax.Array) -> jax.Array:
        return jnp.sum(w * function(*arguments, **dict(parameters)))

    return jax.jit(jax.grad(loss, argnums=tuple(1 + position for position in wrt)))


def _jax_compile(function: Function, compiler: str) -> tuple[Function, Callable[[], int], str]:
    """``jax.jit``, JAX's one compiler: `compiler` is ignored."""
    import jax

    del compiler
    traces = 0

    def traced(*arguments: Any) -> Any:
        nonlocal traces  # Python code runs only while jax.jit traces
        traces += 1
        return function(*arguments)

    return jax.jit(traced), lambda: traces, "jax.jit"
{%- endif %}


#: The backends by name, the reference first; every other one is a port.
BACKENDS: Mapping[str, Backend] = {
    "numpy": Backend(
        dtypes=("float32", "float16"),
        devices=("cpu",),
        asarray=_numpy_asarray,
        to_numpy=np.asarray,
        describe=_numpy_describe,
        call=_reference,
    ),
    "torch": Backend(
        dtypes=DTYPES,
        devices=(*DEVICES, "meta"),
        asarray=_torch_asarray,
        to_numpy=_torch_to_numpy,
        describe=_torch_describe,
        gradients=_torch_gradients,
        compile=_torch_compile,
    ),
{%- if cookiecutter.jax %}
    "jax": Backend(
        dtypes=JAX_DTYPES,
        devices=("cpu", "cuda"),
        asarray=_jax_asarray,
        to_numpy=np.asarray,
        describe=_jax_describe,
        call=_jax_call,
        gradients=_jax_gradients,
        compile=_jax_compile,
    ),
{%- endif %}
}
#: The ports: the backends compared with NumPy, with gradients and compilers.
PORTS = tuple(BACKENDS)[1:]
