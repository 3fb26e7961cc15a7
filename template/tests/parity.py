"""The parity harness: every backend, dtype and device is compared with the NumPy reference.

An algorithm's test module declares what its function takes, in a `Spec` (the operands' shapes,
how their sizes relate, the range of their values), and draws its parameters; the work happens
here:

- `over()`, `targets()`: what to compare, as pytest parameters with ids such as
  ``torch-float32-cuda``. A target is a backend, a dtype and a device; ``conftest.py`` skips a
  target whose device is missing (or fails it, with ``--require-device``).
- `Spec`, `operands()`, `edge_operands()`, `sized_operands()`: the inputs a `Spec` allows, drawn
  by hypothesis or fixed; `arrays()`, `labels()`, `log_uniform()` for the rest.
- `assert_matches_reference()`: the target's result against the float64 NumPy reference computed
  from the very same (rounded) inputs: array type, dtype, device, shape, then values.
- `assert_keeps_type_dtype_device()`: the same checks without values, for PyTorch's ``meta``
  device (tensors without data), which shows device mix-ups without a GPU.
- `assert_gradient_matches_reference()`: the gradient with respect to every floating operand
  against finite differences of the NumPy reference: NumPy is the spec for gradients too.
- `assert_compiled_matches_eager()`, `assert_vmap_matches_loop()`: compiled and batched code
  gives the eager result (within the room of the computation), and compiles once.
- `assert_rejects_unsupported()`: a clear ``TypeError`` for lists, scalars, array-likes, integer
  arrays and operands from different backends.

Every helper takes the algorithm's operands as a tuple and its parameters as a dict, and its own
options keyword-only, so an algorithm's parameters may have any name (even ``tolerances``). What
each backend needs (make an array, read it back, take gradients, compile) is in one table,
`BACKENDS`, at the end; JAX is one of them where the repo's pyproject.toml has a ``jax`` extra.

The same rules in every helper
------------------------------
- The reference runs first. Where it raises (an empty reduction, say: the reference is the spec),
  the target must raise too, any exception, and nothing else is compared. Where the reference
  returns and the target raises, the failure names both outcomes and the shapes. A result with
  no elements is the exception: raising there is as good as returning it, either way (NumPy
  refuses the maximum of an empty axis even where the result would be empty; PyTorch does not).
- No call may change its operands in place: every helper compares them before and after each
  call, the reference's included, and names the operand that changed.
- Warnings about values (`NUMERIC_WARNINGS`: NumPy's floating-point ones, PyTorch's on a
  degenerate reduction) are ignored in the reference and the ports alike: the values tell.

Values
------
A result `r` of a target with dtype `d` matches the float64 reference `e` element by element where

    |r - e| <= atol + rtol * |e| + room

- ``rtol``, ``atol``: `TOLERANCES` [d], a few units in the last place of `d`: the rounding of each
  element-wise operation. A test overrides them per dtype with ``tolerances=``.
- ``room``: `ROOM` times the larger of two measurements of what the computation cannot do better
  in `d`, both made with the reference itself:
  - its *sensitivity*: how far the reference's result moves when every floating input is nudged
    by a random relative amount up to the epsilon of `d` (`NUDGES` tries, the largest change
    counts). A backward-stable computation commits that much: it grows with the number of terms
    each result sums and with their size.
  - its *rounding*: how far the reference run in `d` itself lands from its result in a wider
    dtype, on the same inputs and on `ROUNDINGS - 1` nudged ones, zeros included (the largest
    counts: other inputs round otherwise, as another order of the same operations would). That
    covers cancellation inside intermediate values, which nudging the inputs does not show. NumPy
    has float32 and float16; bfloat16 is emulated by running in float32 with every operation's
    result rounded to bfloat16 (and by scaling float32's error by the ratio of the epsilons);
    float64 by that scaling too, and by long double where NumPy's is wider (x86: 64-bit
    mantissa), which measures the float64 reference's own rounding error.
- What `d` cannot hold is not the port's error: where the exact result overflows `d` (beyond its
  largest finite value, give or take the room), the port's infinity of the same sign matches;
  where the reference run in `d` itself loses an element (inf or NaN where the float64 result is
  finite: an intermediate value overflowed, or underflowed to a zero it then divides by), `d`
  cannot hold that computation and the element is not compared. Both NaN also matches.

Gradients
---------
The gradient of ``sum(w * f(...))``, for fixed random weights w (0 where f is not finite), is
compared with finite differences of the float64 reference, element by element, with a step
``h = DIFFERENCE_STEP * max(1, |x_i|)``. A finite difference is an estimate, and its error is
part of the allowed room: the port's gradient `g` matches where it lies within

    atol + rtol * |c| + DIFFERENCE_SAFETY * (|c - c2| + rounding / h)

of the interval spanned by the central difference `c` and the forward and backward differences:

- ``|c - c2|``, the central difference with step h against the one with step 2h: their
  truncation error (three times c's for a smooth function), and a sample of their rounding error;
- ``rounding / h``: the rounding error of the terms ``w * f`` that the step changes (epsilon times
  ``|w * f|``, plus the reference's own rounding estimated as for values), divided by the step:
  each term is differenced before the sum, so the terms the element does not reach add no error;
- the one-sided differences: at a kink or a tie (``abs`` or ReLU at 0, equal values in a max), any
  value between the slopes on either side is a correct gradient (a subgradient), and ports differ
  there (``jax.grad(jnp.abs)(0.0)`` is 1, PyTorch's is 0, the central difference gives 0). For a
  smooth function those slopes differ by about ``h * |f''|``, so a wrong gradient still fails.
- a feature closer to x than the step (a clip to a tiny interval; a sine faster than the step):
  where `g` lies outside, the one-sided differences are taken again with steps of h/10, h/100,
  ..., as long as that rounding error over the step stays within the allowed room, 1e-3
  of the slopes or a 16th of `g`'s distance from them; `g` matches where it lies between them at
  one of those steps, within the allowed room and 4 times that rounding error.

For draws with extreme values (up to 1e4), the tests ask for finiteness only (``compare_values=
False``): a NaN gradient where the reference's differences are finite (an overflow in a branch a
`where` does not take) is a bug, while the rounding of a backward pass through such values has no
bound to state. Elements where the reference is not finite a step or two away (the edge of its
domain) are not compared; ``atol`` and ``rtol`` are `GRADIENT_TOLERANCE`. A missing gradient
(None: no path from that operand to the result) counts as zero, which passes only where the
differences say zero.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import itertools
import re
import sys
import tomllib
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

__all__ = [
    "DEVICES",
    "DTYPES",
    "GRADIENT_TOLERANCE",
    "PACKAGE",
    "PORTS",
    "ROOM",
    "TOLERANCES",
    "ArrayLike",
    "Spec",
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
    "edge_operands",
    "edge_shapes",
    "labels",
    "log_uniform",
    "missing_backend",
    "missing_device",
    "not_yet_implemented",
    "operands",
    "over",
    "shapes",
    "sized_operands",
    "sized_shapes",
    "targets",
]

#: A public function of the package, e.g. ``softmax``.
Function = Callable[..., Any]
#: The operands of one call (float64 or integer NumPy arrays; targets convert them).
Operands = Sequence[NDArray[Any]]
#: The parameters of one call, passed by keyword: ``{"axis": 0}``.
Parameters = Mapping[str, Any]

#: The repo's root, and its package: the one folder under src/ with a `_dispatch.py`.
REPO = Path(__file__).resolve().parents[1]
(PACKAGE,) = [path.parent.name for path in REPO.glob("src/*/_dispatch.py")]
# Stubs scaffolded before `NotYetImplemented` existed raise a plain NotImplementedError with this
# in their message: recognised too, so that their tests stay expected failures after an update.
EARLIER_STUBS = re.compile(r"not implemented yet|has no \w+ implementation yet")


def not_yet_implemented(error: BaseException) -> bool:
    """Whether `error` says that code is not written yet (a stub, a backend without a port): the
    package's `NotYetImplemented`, or an earlier release's stub. A library's own
    NotImplementedError (an operation without a float16 kernel) is a failure like any other."""
    written_later = importlib.import_module(f"{PACKAGE}._dispatch").NotYetImplemented
    return isinstance(error, written_later) or (
        isinstance(error, NotImplementedError) and EARLIER_STUBS.search(str(error)) is not None
    )


DTYPES = ("float64", "float32", "float16", "bfloat16")
DEVICES = ("cpu", "cuda", "mps")


@dataclass(frozen=True)
class Tolerance:
    """`actual` matches `expected` where ``|actual - expected| <= atol + rtol * |expected|``
    (plus the room of the module docstring)."""

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
#: How many times the reference's own sensitivity and rounding a port may err by: the port
#: rounds every intermediate result too, in its own order, and its library functions are less
#: exact than NumPy's (seen in correct ports: 10x for attention in bfloat16; 36x for a float16
#: cancellation that 4 rounding runs all missed; 64x for JAX's float64 tanh near -1 in GELU).
ROOM = 128.0
#: Random nudges of the inputs that measure the sensitivity (the largest change counts).
NUDGES = 8
#: Runs of the reference in the target's dtype that measure its rounding (the first unnudged).
ROUNDINGS = 4
#: Float64 gradients against finite differences, on top of the differences' own error.
GRADIENT_TOLERANCE = Tolerance(rtol=1e-6, atol=1e-8)
#: The finite differences' step, relative to max(1, |x|): it balances their truncation error
#: (~h^2) against their rounding error (~eps/h) in float64.
DIFFERENCE_STEP = 6e-6
#: How many times its estimated error a finite difference may be off by.
DIFFERENCE_SAFETY = 4.0
#: Values drawn where a `Spec` gives no range; with ``extremes``, also huge and tiny ones.
VALUES = (-10.0, 10.0)

# --- What to compare ------------------------------------------------------------------------


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
    chosen = [backend for backend in backends or BACKENDS if backend in BACKENDS]
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
    """``@parity.over(...)``: run the test once per target, as its `target` argument."""
    return pytest.mark.parametrize("target", targets(backends, dtypes, devices), ids=str)


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
    if backend == "jax" and device == "cuda":
        import jax

        try:
            jax.devices("gpu")
        except RuntimeError:
            return "Requires: CUDA device for JAX (none found; is jax[cuda12] installed?)"
    return None


# --- What the function takes ----------------------------------------------------------------

#: A size bound: a number, or the letter of another axis (its drawn size).
Bound = int | str


@dataclass(frozen=True)
class Spec:
    """What an algorithm takes, declared once in its test module and honoured by every helper.

    shapes
        Each operand's axes, in the order the function takes them. ``"..."`` stands for batch
        axes (0 to 3 of them), the same for every operand that has them; `assert_vmap_matches_loop`
        maps only those operands. Each letter is one axis, the same size wherever it appears.
        ``{"x": "..."}`` any shape; ``{"x": "...d", "weight": "d"}`` RMSNorm (``weight`` has no
        batch axes); ``{"q": "...ld", "k": "...sd", "v": "...se"}`` attention.
    min_dims
        The fewest batch axes: 1 where the algorithm works along an axis of its own.
    sides
        Each letter's size as ``(low, high)``; a bound may be another letter, whose size is drawn
        first: ``{"k": (1, "n")}`` keeps a kernel no longer than the input. Unlisted letters: 1
        to ``max_side`` (5).
    values
        Each operand's values as ``(low, high)``, None for no bound: ``{"p": (0.0, 1.0)}``.
        Unlisted operands: `VALUES`, -10 to 10.
    """

    shapes: Mapping[str, str]
    min_dims: int = 0
    sides: Mapping[str, tuple[Bound, Bound]] = field(default_factory=dict)
    values: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        letters = set(self.letters)
        for name, dims in self.shapes.items():
            if not re.fullmatch(r"(\.\.\.)?[a-z]*", dims):
                msg = (
                    f"shape of {name!r} is {dims!r}; write '...' (batch axes) then letters: '...ld'"
                )
                raise ValueError(msg)
        for letter, bounds in self.sides.items():
            unknown = {letter, *(b for b in bounds if isinstance(b, str))} - letters
            if unknown:
                msg = f"sides {letter!r}: {sorted(unknown)} not among the letters of shapes"
                raise ValueError(msg)
        for name in set(self.values) - set(self.shapes):
            msg = f"values {name!r}: not an operand of shapes ({', '.join(self.shapes)})"
            raise ValueError(msg)
        self.order()  # refuses bounds that refer to each other in a circle

    @property
    def letters(self) -> list[str]:
        """Every dimension letter, in order of appearance."""
        return list(
            dict.fromkeys("".join(dims.removeprefix("...") for dims in self.shapes.values()))
        )

    @property
    def batched(self) -> tuple[bool, ...]:
        """For each operand, whether it has the batch axes."""
        return tuple(dims.startswith("...") for dims in self.shapes.values())

    def order(self) -> list[str]:
        """The letters, each after the letters its bounds name."""
        ordered: list[str] = []
        pending = self.letters
        while pending:
            ready = [
                letter
                for letter in pending
                if all(b in ordered for b in self.sides.get(letter, ()) if isinstance(b, str))
            ]
            if not ready:
                msg = f"sides: the bounds of {pending} refer to each other in a circle"
                raise ValueError(msg)
            ordered += ready
            pending = [letter for letter in pending if letter not in ready]
        return ordered

    def bounds(self, letter: str, sides: Mapping[str, int], max_side: int) -> tuple[int, int]:
        """`letter`'s (low, high) size, given the sizes of the letters drawn before it."""
        low, high = self.sides.get(letter, (1, max_side))
        low = sides[low] if isinstance(low, str) else low
        high = sides[high] if isinstance(high, str) else min(high, max(max_side, low))
        return low, high

    def build(self, batch: tuple[int, ...], sides: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
        """Each operand's shape, for these batch axes and letter sizes."""
        return {
            name: (batch if dims.startswith("...") else ())
            + tuple(sides[letter] for letter in dims.removeprefix("..."))
            for name, dims in self.shapes.items()
        }

    def value_range(self, name: str) -> tuple[float | None, float | None]:
        """`name`'s value range, None where it has no bound."""
        return self.values.get(name, (None, None))


def _as_spec(spec: Spec | Mapping[str, str], min_dims: int | None = None) -> Spec:
    """`spec`, or a `Spec` of these shapes (test modules written before `Spec` pass a dict)."""
    if not isinstance(spec, Spec):
        return Spec(spec, min_dims=min_dims or 0)
    if min_dims is not None and min_dims != spec.min_dims:
        return Spec(spec.shapes, min_dims, spec.sides, spec.values)
    return spec


# JAX compiles every operation anew for each input shape (tens of ms each on a CPU), so
# hypothesis draws the values of JAX inputs but keeps to fixed shapes: batch axes `JAX_BATCH`,
# and sizes 2, 3, 4, ... for the dimension letters (within their `Spec.sides`).
JAX_BATCH = (2, 3)


def shapes(
    target: Target,
    spec: Spec | Mapping[str, str],
    *,
    min_dims: int | None = None,
    max_dims: int = 3,
    max_side: int = 5,
) -> st.SearchStrategy[dict[str, tuple[int, ...]]]:
    """The operands' shapes that `spec` allows, by name: batch axes shared, letters related."""
    spec = _as_spec(spec, min_dims)
    if target.backend == "jax":
        count = min(max(len(JAX_BATCH), spec.min_dims), max_dims)
        sides: dict[str, int] = {}
        for i, letter in enumerate(spec.order()):
            low, high = spec.bounds(letter, sides, max_side)
            sides[letter] = max(low, min(high, 2 + i))
        return st.just(spec.build((JAX_BATCH * count)[:count], sides))

    @st.composite
    def draw(draw: st.DrawFn) -> dict[str, tuple[int, ...]]:
        batch = draw(hnp.array_shapes(min_dims=spec.min_dims, max_dims=max_dims, max_side=max_side))
        sides: dict[str, int] = {}
        for letter in spec.order():
            low, high = spec.bounds(letter, sides, max_side)
            if low > high:
                reject()  # hypothesis draws again
            sides[letter] = draw(st.integers(low, high))
        return spec.build(tuple(batch), sides)

    return draw()


def arrays(
    target: Target,
    shape: tuple[int, ...],
    *,
    extremes: bool = False,
    values: tuple[float | None, float | None] = (None, None),
) -> st.SearchStrategy[NDArray[np.float64]]:
    """Float64 arrays of `shape`, for `target` to convert, with values from `values[0]` to
    `values[1]` (None: -10 and 10, `VALUES`).

    With `extremes`, also huge ones and tiny ones (near the smallest normal number of the target's
    dtype), within `values` where it bounds them. Huge means up to 1e4 in magnitude (exp overflows
    from 89 in float32 and 710 in float64), but at most 1/sqrt(eps) of the dtype, beyond which the
    product of two values has no digit left for a difference of 1 (float16: 32, bfloat16: 11).
    """
    low, high = _resolve(values)
    elements = [st.floats(low, high)]
    if extremes:
        limits = torch.finfo(getattr(torch, target.dtype))
        huge, tiny = min(1e4, float(limits.eps) ** -0.5), 1e3 * float(limits.tiny)
        lowest = -np.inf if values[0] is None else values[0]
        highest = np.inf if values[1] is None else values[1]
        elements += [
            st.floats(max(lowest, -bound), min(highest, bound))
            for bound in (huge, tiny)
            if max(lowest, -bound) <= min(highest, bound)
        ]
    return hnp.arrays(np.float64, shape, elements=st.one_of(elements))


def _resolve(values: tuple[float | None, float | None]) -> tuple[float, float]:
    """A value range with `VALUES` for its missing bounds."""
    low, high = values
    return (VALUES[0] if low is None else low, VALUES[1] if high is None else high)


def operands(
    target: Target,
    spec: Spec | Mapping[str, str],
    *,
    extremes: bool = False,
    min_dims: int | None = None,
    max_dims: int = 3,
    max_side: int = 5,
) -> st.SearchStrategy[tuple[NDArray[np.float64], ...]]:
    """One float64 array per operand of `spec`, in its order, as `spec` allows."""
    spec = _as_spec(spec, min_dims)
    drawn = shapes(target, spec, max_dims=max_dims, max_side=max_side)
    return drawn.flatmap(
        lambda found: st.tuples(
            *(
                arrays(target, found[name], extremes=extremes, values=spec.value_range(name))
                for name in spec.shapes
            )
        )
    )


def labels(shape: tuple[int, ...], classes: int) -> st.SearchStrategy[NDArray[np.int64]]:
    """Integer class labels in [0, classes) of the given shape."""
    return hnp.arrays(np.int64, shape, elements=st.integers(0, classes - 1))


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Positive numbers from `low` to `high`, as many per decade: ``eps``, ``temperature``."""
    return st.floats(np.log10(low), np.log10(high)).map(lambda exponent: float(10.0**exponent))


def _fill(spec: Spec, name: str) -> float:
    """A value `name` may take: 1 where its range allows it, else the middle of its range."""
    low, high = _resolve(spec.value_range(name))
    return 1.0 if low <= 1.0 <= high else (low + high) / 2


def edge_operands(spec: Spec, case: str) -> tuple[NDArray[np.float64], ...]:
    """Fixed operands for an edge case: "smallest" (each letter at its smallest size, the fewest
    batch axes of size 1: 0-d operands where `min_dims` is 0) or "empty" (every side 0)."""
    found = edge_shapes(spec)[case]
    return tuple(np.full(found[name], _fill(spec, name)) for name in spec.shapes)


def edge_shapes(
    spec: Spec | Mapping[str, str], *, min_dims: int | None = None
) -> dict[str, dict[str, tuple[int, ...]]]:
    """The shapes of `edge_operands`, by case, then by operand."""
    spec = _as_spec(spec, min_dims)
    smallest: dict[str, int] = {}
    for letter in spec.order():
        smallest[letter] = spec.bounds(letter, smallest, 1)[0]
    return {
        "smallest": spec.build((1,) * spec.min_dims, smallest),
        "empty": spec.build((0,) * max(spec.min_dims, 1), dict.fromkeys(spec.letters, 0)),
    }


def sized_operands(
    spec: Spec, size: int, *, min_dims: int | None = None, seed: int = 0
) -> tuple[NDArray[np.float64], ...]:
    """Fixed random operands with about `size` elements in the largest (for benchmarks and the
    fixed-input tests): standard normal values, or uniform within a declared range."""
    spec = _as_spec(spec, min_dims)
    found = sized_shapes(spec, size)
    rng = np.random.default_rng(seed)
    drawn = []
    for name in spec.shapes:
        if name in spec.values:
            drawn.append(rng.uniform(*_resolve(spec.value_range(name)), size=found[name]))
        else:
            drawn.append(rng.normal(size=found[name]))
    return tuple(drawn)


def sized_shapes(
    spec: Spec | Mapping[str, str], size: int, *, min_dims: int | None = None
) -> dict[str, tuple[int, ...]]:
    """The shapes of `sized_operands`: two axes or more, every side about the same."""
    spec = _as_spec(spec, min_dims)
    longest = max(len(dims.removeprefix("...")) for dims in spec.shapes.values())
    count = max(spec.min_dims, 2 - longest)
    side = max(1, round(size ** (1 / (count + longest))))
    sides: dict[str, int] = {}
    for letter in spec.order():
        low, high = spec.bounds(letter, sides, side)
        sides[letter] = max(low, min(high, side))
    return spec.build((side,) * count, sides)


# --- Comparing values -----------------------------------------------------------------------


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


#: Warnings about values (NumPy's floating-point ones, PyTorch's on degenerate reductions), which
#: the reference and the ports may raise alike: the values tell (and some BLAS builds raise
#: spurious ones). Other warnings (deprecations) are left to the test run's own filters.
NUMERIC_WARNINGS = (RuntimeWarning, UserWarning)


def _reference(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    """`function` on NumPy arrays, its `NUMERIC_WARNINGS` silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NUMERIC_WARNINGS)
        return function(*arguments, **parameters)


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
            with np.errstate(invalid="ignore"):
                lost = np.isfinite(high) & ~np.isfinite(low)
                error = np.where(np.isfinite(high) & np.isfinite(low), np.abs(low - high), 0.0)
            largest = np.maximum(largest, factor * error)
            if dtype != "float64":  # float32 has bfloat16's range, not float64's
                overflows = overflows | lost
    return Room(largest, overflows)


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


# --- Calling the function -------------------------------------------------------------------


def _names(function: Function, count: int) -> list[str]:
    """The names of `function`'s first `count` arguments, for messages."""
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"operand {i}" for i in range(count)]


def _snapshot(values: Sequence[Any]) -> list[NDArray[Any] | None]:
    """NumPy copies of the arrays that a call could change (None: immutable, or no data)."""
    copies: list[NDArray[Any] | None] = []
    for value in values:
        if isinstance(value, np.ndarray):
            copies.append(value.copy())
        elif isinstance(value, torch.Tensor) and value.device.type != "meta":
            copies.append(to_numpy(value))
        else:
            copies.append(None)  # JAX arrays are immutable
    return copies


def _assert_unchanged(
    function: Function, before: Sequence[NDArray[Any] | None], after: Sequence[Any], who: str
) -> None:
    __tracebackhide__ = True
    for name, old, value in zip(_names(function, len(after)), before, after, strict=True):
        if old is None:
            continue
        new = to_numpy(value)
        if not np.array_equal(old, new, equal_nan=True):
            changed = np.count_nonzero(~((old == new) | (np.isnan(old) & np.isnan(new))))
            pytest.fail(
                f"{who} changed its operand {name} in place ({changed} of {old.size} elements): "
                f"work on a copy (`{name} = {name} - m`, not `{name} -= m`; no out=, no `_` "
                "methods)"
            )


def _shapes(function: Function, arguments: Sequence[Any]) -> str:
    names = _names(function, len(arguments))
    return ", ".join(f"{n} {tuple(np.shape(a))}" for n, a in zip(names, arguments, strict=True))


@dataclass(frozen=True)
class Expected:
    """The reference's outcome for one call: its result, or the error it raised."""

    result: Any = None
    error: Exception | None = None


def _expected(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Expected:
    """The reference on float64 copies of `arguments` (any backend), checked to leave them alone."""
    __tracebackhide__ = True
    inputs = [to_numpy(argument) for argument in arguments]
    before = _snapshot(inputs)
    try:
        result = _reference(function, inputs, parameters)
    except Exception as error:  # any error of the reference is part of the spec
        if not_yet_implemented(error):
            raise
        return Expected(error=error)
    finally:
        _assert_unchanged(function, before, inputs, f"the NumPy reference {function.__name__}")
    return Expected(result)


def _port(
    call: Callable[[], Any],
    function: Function,
    arguments: Sequence[Any],
    expected: Expected,
    what: str,
) -> Any:
    """`call()`, the target's computation, which must raise if and only if the reference raises,
    and leave `arguments` alone. Returns its result, or None where it raised as it may."""
    __tracebackhide__ = True
    before = _snapshot(arguments)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NUMERIC_WARNINGS)
            result = call()
    except Exception as error:
        if not_yet_implemented(error):
            raise  # conftest reports it as XFAIL
        if expected.error is not None:
            return None  # both raise: which exception is each backend's own choice
        shape = tuple(np.shape(to_numpy(expected.result)))
        if 0 in shape:
            return None  # no element to disagree on: raising is as good as an empty result
        name = function.__name__
        msg = (
            f"{what} raised {type(error).__name__}: {error}\nwhere the NumPy reference returns a "
            f"result of shape {shape}, for {_shapes(function, arguments)}. If such inputs are "
            f"outside what {name} should accept, make the reference refuse them too (raise "
            f"ValueError in _{name}_numpy), or keep the tests away from them with the test's "
            "SPEC: a larger min_dims, or the shapes, sides and values it allows."
        )
        raise pytest.fail.Exception(msg) from error
    _assert_unchanged(function, before, arguments, what)
    if expected.error is not None and 0 not in np.shape(result):
        refusal = expected.error
        pytest.fail(
            f"{what} returned a result of shape {tuple(np.shape(result))} where the NumPy "
            f"reference raises {type(refusal).__name__}: {refusal} (for "
            f"{_shapes(function, arguments)})"
        )
    return result


# --- Values ---------------------------------------------------------------------------------


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
    the tolerance and for a raising reference.
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    arguments = [target.asarray(value) for value in operands]
    expected = _expected(function, arguments, parameters)
    what = f"{function.__name__} on {target}"
    call = functools.partial(BACKENDS[target.backend].call, function, arguments, parameters)
    actual = _port(call, function, arguments, expected, what)
    if expected.error is None and actual is not None:
        inputs = [to_numpy(argument) for argument in arguments]
        room = _room(function, inputs, parameters, expected.result, target.dtype)
        assert_close(
            actual, expected.result, target=target, what=what, tolerances=tolerances, room=room
        )


def assert_keeps_type_dtype_device(
    function: Function, target: Target, operands: Operands, parameters: Parameters | None = None
) -> None:
    """`function` on `target` returns the target's array type, dtype and device, and the
    reference's shape; values are not compared (on the ``meta`` device there are none)."""
    __tracebackhide__ = True
    parameters = parameters or {}
    expected = _expected(function, list(operands), parameters)
    arguments = [target.asarray(value) for value in operands]
    what = f"{function.__name__} on {target}"
    actual = _port(lambda: function(*arguments, **parameters), function, arguments, expected, what)
    if expected.error is None and actual is not None:
        _check_type_dtype_device(actual, np.shape(expected.result), target=target, what=what)


# --- Gradients ------------------------------------------------------------------------------


Terms = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def _slopes(
    terms: Terms, x: NDArray[np.float64], index: tuple[int, ...], step: float, rounding: Any
) -> tuple[float, float, float, float, float]:
    """The forward and backward differences of ``sum(terms)`` at element `index` of `x` with
    `step`, the central ones with `step` and with twice `step` (NaN where a term is not finite, or
    `terms` raises, there), and their rounding error: the sum of `rounding` over the terms that
    change. Each term is differenced before the sum: the terms the element does not reach cancel
    exactly instead of adding their rounding."""
    center = x[index]
    values = {}
    for offset in (-2, -1, 0, 1, 2):
        moved = x.copy()
        moved[index] = center + offset * step
        try:
            values[offset] = (float(moved[index]), terms(moved))
        except Exception:  # noqa: BLE001 - outside the reference's domain: not compared here
            values[offset] = (float(moved[index]), np.full(np.shape(rounding), np.nan))
    changed = np.zeros(np.shape(rounding), dtype=bool)
    for _, y in values.values():
        changed |= y != values[0][1]

    def slope(start: int, stop: int) -> float:
        (x0, y0), (x1, y1) = values[start], values[stop]
        with np.errstate(invalid="ignore"):
            return float(np.sum(y1 - y0)) / (x1 - x0) if x1 != x0 else float("nan")

    noise = float(np.sum(np.where(changed, rounding, 0.0)))
    return slope(0, 1), slope(-1, 0), slope(-1, 1), slope(-2, 2), noise


@dataclass(frozen=True)
class Differences:
    """Finite differences of a loss, ``sum(terms)``, with respect to each element of one operand,
    and their own estimated error (module docstring, "Gradients")."""

    terms: Terms
    x: NDArray[np.float64]
    rounding: NDArray[np.float64]  # each term's own rounding error
    central: NDArray[np.float64]  # step h
    forward: NDArray[np.float64]
    backward: NDArray[np.float64]
    error: NDArray[np.float64]  # |central - central with step 2h| + rounding / h

    @classmethod
    def of(cls, terms: Terms, x: NDArray[np.float64], rounding: Any) -> Differences:
        """The differences of ``sum(terms)`` at `x`, element by element, with a step
        ``h = DIFFERENCE_STEP * max(1, |x_i|)``."""
        central, forward, backward, error = (np.full(x.shape, np.nan) for _ in range(4))
        for index in np.ndindex(x.shape):
            h = DIFFERENCE_STEP * max(1.0, abs(float(x[index])))
            slopes = _slopes(terms, x, index, h, rounding)
            forward[index], backward[index], central[index], wide, noise = slopes
            error[index] = abs(central[index] - wide) + noise / h
        return cls(terms, x, rounding, central, forward, backward, error)

    def finer(self, index: tuple[int, ...], got: float, allowed: float, distance: float) -> bool:
        """Whether `got` lies between the one-sided differences at `index` with a step of h/10,
        h/100, ..., widened by `allowed` and by the terms' rounding error over the step: a feature
        closer to x than the step (a kink, or oscillations faster than it) shows there. The step
        shrinks while that rounding error stays within `allowed`, 1e-3 of the slopes, or a 16th of
        the `distance` to explain (so that it can never explain that distance away)."""
        x = float(self.x[index])
        step = DIFFERENCE_STEP * max(1.0, abs(x))
        while x + step / 10 != x:
            step /= 10
            forward, backward, _, _, rounding = _slopes(
                self.terms, self.x, index, step, self.rounding
            )
            noise = rounding / step
            scale = np.nanmax([abs(got), abs(forward), abs(backward)])
            if noise > max(allowed, 1e-3 * scale, distance / 16):
                return False
            slack = allowed + DIFFERENCE_SAFETY * noise
            if min(forward, backward) - slack <= got <= max(forward, backward) + slack:
                return True
        return False


def _assert_gradient_close(
    gradient: Any,
    differences: Differences,
    *,
    target: Target,
    what: str,
    outputs_finite: bool,
    compare_values: bool,
) -> None:
    __tracebackhide__ = True
    shape = differences.central.shape
    missing = gradient is None
    if not missing:
        _check_type_dtype_device(gradient, shape, target=target, what=what)
    got = np.zeros(shape) if missing else to_numpy(gradient)  # None: no path, a zero gradient
    c, f, b = differences.central, differences.forward, differences.backward
    tolerance = GRADIENT_TOLERANCE
    with np.errstate(invalid="ignore"):
        low, high = np.minimum(np.minimum(c, f), b), np.maximum(np.maximum(c, f), b)
        allowed = (
            tolerance.atol + tolerance.rtol * np.abs(c) + DIFFERENCE_SAFETY * differences.error
        )
        distance = np.maximum(np.maximum(low - got, got - high), 0.0)
        compared = np.isfinite(low) & np.isfinite(high) & np.isfinite(differences.error)
        if not outputs_finite:  # 0 * inf: the zero weight of a non-finite output gives NaN
            compared &= np.isfinite(got)
        if not compare_values:  # finite where the reference's differences are
            _assert_finite_where(got, compared, what)
            return
        matches = np.array(~compared | (distance <= allowed))  # writable, 0-d operands too
        for index in map(tuple, np.argwhere(~matches)):  # a feature closer than the step?
            matches[index] = differences.finer(
                index, float(got[index]), float(allowed[index]), float(distance[index])
            )
        if matches.all():
            return
        excess = np.where(matches, -np.inf, np.nan_to_num(distance / allowed, nan=np.inf))
    worst = np.unravel_index(np.argmax(excess), got.shape)
    if missing:
        pytest.fail(
            f"{what} is missing: the port cuts the graph of that operand "
            "(.detach(), .item(), .numpy(), torch.tensor(...), an in-place write), while finite "
            f"differences of the reference give {float(c[worst])!r} at index "
            f"{tuple(int(i) for i in worst)}"
        )
    pytest.fail(
        f"{what} differs from finite differences of the float64 NumPy reference at "
        f"{np.count_nonzero(~matches)} of {got.size} elements.\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, central "
        f"difference {float(c[worst])!r} (one-sided: {float(b[worst])!r} and {float(f[worst])!r}); "
        f"{float(distance[worst]):.3g} away, {float(excess[worst]):.3g} times the "
        f"{float(allowed[worst]):.3g} allowed (atol + rtol * |central| + "
        f"{DIFFERENCE_SAFETY:g} * the differences' estimated error "
        f"{float(differences.error[worst]):.3g})"
    )


def _assert_finite_where(got: NDArray[np.float64], compared: NDArray[np.bool_], what: str) -> None:
    __tracebackhide__ = True
    broken = compared & ~np.isfinite(got)
    if broken.any():
        worst = tuple(int(i) for i in np.argwhere(broken)[0])
        pytest.fail(
            f"{what} is {float(got[worst])!r} at index {worst}, where finite differences of the "
            "reference are finite: an overflow in a branch the result does not take (torch.where "
            "and jnp.where send 0 * inf = nan back through it: clamp that branch's input)?"
        )


def assert_gradient_matches_reference(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    wrt: Sequence[int] | None = None,
    compare_values: bool = True,
) -> None:
    """The gradient of ``sum(w * function(...))``, with fixed random weights w, with respect to
    each operand in `wrt` (by position; default: every floating one) matches finite differences
    of the float64 NumPy reference, as the module docstring says ("Gradients").

    Each of the backend's ways to take gradients is checked (its ``gradients`` in `BACKENDS`;
    PyTorch: ``torch.autograd.grad`` and ``torch.func.grad``). Use a float64 target. With
    `compare_values` False (for extreme values, up to 1e4), only finiteness is checked: the
    gradient must be finite wherever the reference's differences are, while the rounding of a
    backward pass through such values has no bound the harness can state.
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    reference = [np.asarray(value) for value in operands]
    arguments = [target.asarray(value) for value in reference]
    expected = _expected(function, arguments, parameters)
    gradients = BACKENDS[target.backend].gradients
    if gradients is None:
        pytest.fail(f"no gradients on {target.backend}")
    if wrt is None:
        wrt = [i for i, value in enumerate(reference) if value.dtype.kind == "f"]
    outputs = to_numpy(expected.result) if expected.error is None else np.zeros(())
    weights = np.random.default_rng(0).standard_normal(outputs.shape)
    with np.errstate(invalid="ignore"):
        weights = np.where(np.isfinite(outputs), weights, 0.0)
    what = f"the gradient of {function.__name__} on {target}"
    call = functools.partial(gradients, function, arguments, list(wrt), weights, parameters)
    found = _port(call, function, arguments, expected, what)
    if expected.error is not None or found is None:
        return
    finite = np.isfinite(outputs)
    own = np.asarray(_rounding(function, reference, parameters, "float64").room)
    rounding = np.abs(weights) * np.where(
        finite, np.finfo(np.float64).eps * np.abs(outputs) + own, 0.0
    )
    for position in wrt:

        def terms(x: NDArray[np.float64], position: int = position) -> NDArray[np.float64]:
            changed = [*reference[:position], x, *reference[position + 1 :]]
            values = _finite(_reference(function, changed, parameters))
            with np.errstate(invalid="ignore"):
                return np.where(weights != 0, weights * values, 0.0)

        differences = Differences.of(terms, reference[position], rounding)
        name = _names(function, len(reference))[position]
        for method, gradient in found[position].items():
            what = f"the {method} gradient of {function.__name__} for {name} on {target}"
            _assert_gradient_close(
                gradient,
                differences,
                target=target,
                what=what,
                outputs_finite=bool(finite.all()),
                compare_values=compare_values,
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


def _close_to(
    function: Function,
    target: Target,
    arguments: Sequence[Any],
    parameters: Parameters,
    *,
    batched: Sequence[bool] | None = None,
) -> tuple[Expected, Callable[[Any, Any, str, Mapping[str, Tolerance] | None], None]]:
    """The reference's outcome for `arguments`, and a check that a result of the target is
    within the room of that computation of an eager one (per slice of the batch, if `batched`)."""
    __tracebackhide__ = True
    if batched is None:
        expected = _expected(function, arguments, parameters)
        results = [] if expected.error else [expected.result]
        slices = [arguments]
    else:
        slices = [
            [
                value[i] if mapped else value
                for value, mapped in zip(arguments, batched, strict=True)
            ]
            for i in range(len(next(a for a, m in zip(arguments, batched, strict=True) if m)))
        ]
        outcomes = [_expected(function, one, parameters) for one in slices]
        expected = next((outcome for outcome in outcomes if outcome.error), Expected(0.0))
        results = [outcome.result for outcome in outcomes] if expected.error is None else []
    rooms = [
        _room(function, [to_numpy(a) for a in one], parameters, result, target.dtype)
        for one, result in zip(slices, results, strict=False)
    ]

    def check(
        actual: Any, eager: Any, what: str, tolerances: Mapping[str, Tolerance] | None
    ) -> None:
        __tracebackhide__ = True
        room = rooms[0] if batched is None else Room(np.stack([np.asarray(r.room) for r in rooms]))
        assert_close(actual, eager, target=target, what=what, tolerances=tolerances, room=room)

    return expected, check


def assert_compiled_matches_eager(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    compiler: str = "aot_eager",
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """`function` compiled as one whole graph gives the eager result (within the room of the
    computation, as `assert_matches_reference` allows), and is compiled once for two calls with
    different values of the same shapes and dtypes.

    PyTorch: ``torch.compile(fullgraph=True)``, so any graph break is an error. The default
    `compiler`, ``aot_eager``, traces the forward and backward graphs as inductor would but
    skips code generation (a second instead of half a minute on a CPU); pass
    ``compiler="inductor"`` for the real thing. Other backends compile their own way (their
    ``compile`` in `BACKENDS`).
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    compile_ = BACKENDS[target.backend].compile
    if compile_ is None:
        pytest.fail(f"no compiler for {target.backend}")
    calls = [
        [target.asarray(value) for value in operands],
        [target.asarray(_other_values(value)) for value in operands],
    ]
    compiled, count, how = compile_(functools.partial(function, **parameters), compiler)
    name = f"{how} of {function.__name__} on {target}"
    for arguments in calls:
        expected, check = _close_to(function, target, arguments, parameters)
        what = f"{function.__name__} on {target}"
        eager = functools.partial(function, *arguments, **parameters)
        eager_result = _port(eager, function, arguments, expected, what)
        result = _port(functools.partial(compiled, *arguments), function, arguments, expected, name)
        if expected.error is None and result is not None and eager_result is not None:
            check(result, eager_result, name, tolerances)
    if count() > 1:
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
    spec: Spec | None = None,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """``torch.func.vmap`` of `function` over the leading axis of the batched operands (those
    with ``...`` in `spec`; every operand without a `spec`) equals `function` applied to each
    slice, stacked, within the room of the computation."""
    __tracebackhide__ = True
    parameters = parameters or {}
    arguments = [target.asarray(value) for value in operands]
    batched = spec.batched if spec is not None else (True,) * len(arguments)
    if not any(batched):
        pytest.skip(
            f"{function.__name__}: no operand has batch axes ('...' in its Spec) to map over"
        )
    expected, check = _close_to(function, target, arguments, parameters, batched=batched)
    what = f"torch.func.vmap of {function.__name__} on {target}"

    def loop() -> torch.Tensor:
        size = len(next(a for a, m in zip(arguments, batched, strict=True) if m))
        return torch.stack(
            [
                function(
                    *[a[i] if m else a for a, m in zip(arguments, batched, strict=True)],
                    **parameters,
                )
                for i in range(size)
            ]
        )

    looped = _port(loop, function, arguments, expected, f"{function.__name__} on {target}")
    in_dims = tuple(0 if mapped else None for mapped in batched)
    mapped = torch.func.vmap(functools.partial(function, **parameters), in_dims=in_dims)
    result = _port(lambda: mapped(*arguments), function, arguments, expected, what)
    if expected.error is None and result is not None and looped is not None:
        check(result, looped, what, tolerances)


# --- Refused inputs -------------------------------------------------------------------------


class ArrayLike:
    """Converts to an array with ``numpy.asarray`` but is not one, like a pandas object."""

    def __init__(self, values: NDArray[Any]) -> None:
        self.values = values

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        return self.values if dtype is None else self.values.astype(dtype)


def _implemented(
    function: Function, backend: str, operands: Operands, parameters: Parameters
) -> bool:
    """Whether `function` has an implementation for `backend` (raises no "not implemented yet"
    for valid operands): refusals are checked on the backends it has."""
    arguments = [Target(backend, "float64").asarray(value) for value in operands]
    try:
        _reference(function, arguments, parameters)
    except Exception as error:  # noqa: BLE001 - refusing operands is the function's business
        return not not_yet_implemented(error)
    return True


def assert_rejects_unsupported(
    function: Function, operands: Operands, parameters: Parameters | None = None
) -> None:
    """`function` raises a ``TypeError`` that names the problem and what to pass instead:

    - for each operand replaced by a list, a Python float or an `ArrayLike`;
    - for each floating operand replaced by integers, on every backend the function has (each
      would promote them differently, so the package refuses them);
    - with several operands, for operands from two such backends (naming both).
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    name = function.__name__
    available = [
        backend
        for backend in BACKENDS
        if missing_backend(backend) is None
        and _implemented(function, backend, operands, parameters)
    ]
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
    chosen = [arguments[position].detach().requires_grad_() for position in wrt]
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


def _uses_jax() -> bool:
    """Whether this repo has JAX as a backend: its pyproject.toml declares a ``jax`` extra."""
    pyproject = REPO / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get(
        "optional-dependencies", {}
    )
    return "jax" in extras


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
    """Through `jax.jit`, compiled once per function, shapes and parameters: eager JAX compiles
    every operation separately for each new shape (tens of ms each on a CPU), jitted JAX the
    whole function at once. `assert_compiled_matches_eager` checks that both agree. Float
    parameters are traced (`_static`), so that a new value does not compile again."""
    static, dynamic = _static(parameters)
    return _traced_or_static(_jitted, function, static, dynamic, arguments)


def _static(parameters: Parameters) -> tuple[tuple[tuple[str, Any], ...], dict[str, float]]:
    """The parameters that `jax.jit` compiles in (all but floats), and the floats it traces."""
    dynamic = {name: value for name, value in parameters.items() if isinstance(value, float)}
    static = tuple(
        sorted((name, value) for name, value in parameters.items() if name not in dynamic)
    )
    return static, dynamic


def _traced_or_static(
    make: Callable[..., Function],
    function: Function,
    static: tuple[tuple[str, Any], ...],
    dynamic: dict[str, float],
    arguments: Sequence[Any],
    *more: Any,
) -> Any:
    """``make(function, static, *more)(*arguments, **dynamic)``; where the function needs a float
    parameter's value in Python (a branch on it, say), compiled with every parameter static."""
    import jax

    try:
        return make(function, static, *more)(*arguments, **dynamic)
    except jax.errors.JAXTypeError:
        if not dynamic:
            raise
        return make(function, tuple(sorted({**dict(static), **dynamic}.items())), *more)(*arguments)


@functools.cache
def _jitted(function: Function, static: tuple[tuple[str, Any], ...]) -> Function:
    import jax

    jitted: Function = jax.jit(functools.partial(function, **dict(static)))  # Any without JAX
    return jitted


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
    static, dynamic = _static(parameters)
    found = _traced_or_static(_jax_gradient, function, static, dynamic, [w, *arguments], tuple(wrt))
    return {position: {"jax.grad": value} for position, value in zip(wrt, found, strict=True)}


@functools.cache
def _jax_gradient(
    function: Function, static: tuple[tuple[str, Any], ...], wrt: tuple[int, ...]
) -> Function:
    """`jax.jit(jax.grad(...))` of ``sum(w * function(*arguments))``, compiled once per shape."""
    import jax
    import jax.numpy as jnp

    def loss(w: Any, *arguments: Any, **dynamic: Any) -> Any:
        return jnp.sum(w * function(*arguments, **dict(static), **dynamic))

    compiled: Function = jax.jit(jax.grad(loss, argnums=tuple(1 + position for position in wrt)))
    return compiled  # typed here: without JAX installed, jax.jit is Any


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
    **(
        {
            "jax": Backend(
                dtypes=JAX_DTYPES,
                devices=("cpu", "cuda"),
                asarray=_jax_asarray,
                to_numpy=np.asarray,
                describe=_jax_describe,
                call=_jax_call,
                gradients=_jax_gradients,
                compile=_jax_compile,
            )
        }
        if _uses_jax()
        else {}
    ),
}
#: The ports: the backends compared with NumPy, with gradients and compilers.
PORTS = tuple(BACKENDS)[1:]
