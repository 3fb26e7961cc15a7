"""The inputs that a `Spec` allows, drawn by hypothesis (the fixed ones are in fixed.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

from .core import VALUES
from .spec import Interval, Spec, Values, as_spec, domain
from .targets import Target

# JAX compiles every operation anew for each input shape (tens of ms each on a CPU), so
# hypothesis draws the values of JAX inputs but keeps to fixed shapes: batch axes `JAX_BATCH`,
# and sizes near 2, 3, 4, ... for the dimension letters, times their multiple (among the sizes
# their `Spec` allows, the larger on a tie).
JAX_BATCH = (2, 3)


def shapes(
    target: Target,
    spec: Spec | Mapping[str, str],
    *,
    min_dims: int | None = None,
    max_dims: int = 3,
    max_side: int = 5,
    parameters: Mapping[str, Any] | None = None,
) -> st.SearchStrategy[dict[str, tuple[int, ...]]]:
    """The operands' shapes that `spec` allows, by name: batch axes shared, letters related;
    `parameters`: the values of those that bounds name."""
    spec = as_spec(spec, min_dims)
    parameters = parameters or {}
    if target.backend == "jax":
        count = min(max(len(JAX_BATCH), spec.min_dims), max_dims)
        sides: dict[str, int] = {}
        for i, letter in enumerate(spec.order()):
            allowed = spec.sizes(letter, {**parameters, **sides}, max_side)
            if not allowed:
                return st.nothing()  # hypothesis draws the parameters again
            # Three values or more (a length-2 axis reads the same reversed: a circular
            # correlation for a convolution passes there); two multiples or more where it has a
            # step: a grouping bug shows only then.
            near = (2 + i) * allowed.step if allowed.step > 1 else 3 + i
            sides[letter] = min(allowed, key=lambda size: (abs(size - near), -size))
        return st.just(spec.build((JAX_BATCH * count)[:count], sides))
    return _drawn_shapes(spec, max_dims, max_side, parameters)


# Defined once: `st.composite` reads the function's source each time it decorates one, and
# `shapes` runs for every example.
@st.composite
def _drawn_shapes(
    draw: st.DrawFn, spec: Spec, max_dims: int, max_side: int, parameters: Mapping[str, Any]
) -> dict[str, tuple[int, ...]]:
    batch = draw(hnp.array_shapes(min_dims=spec.min_dims, max_dims=max_dims, max_side=max_side))
    sides: dict[str, int] = {}
    for letter in spec.order():
        allowed = spec.sizes(letter, {**parameters, **sides}, max_side)
        if not allowed:
            reject()  # hypothesis draws again
        sides[letter] = draw(st.sampled_from(allowed))
    return spec.build(tuple(batch), sides)


def arrays(
    target: Target,
    shape: tuple[int, ...],
    *,
    extremes: bool = False,
    values: Values | Sequence[Interval] = (None, None),
) -> st.SearchStrategy[NDArray[np.float64]]:
    """Float64 arrays of `shape`, for `target` to convert, with values in `values`: ``(low,
    high)`` (None: -10 and 10, `VALUES`), or interval notation, ``"(0, 10]"``, ``"[-10, -0.5] |
    [0.5, 10]"`` (`domain`). Each value stays in them as it rounds to the target's dtype: an
    open end, or a hole's, is drawn from the nearest value of that dtype inside on
    (`Interval.inside`).

    No value is subnormal in the target's dtype (`_normal`). With `extremes`, also huge ones and
    tiny ones (near the smallest normal number of the target's dtype), within `values` where it
    bounds them. Huge means up to 1e4 in magnitude (exp overflows
    from 89 in float32 and 710 in float64), but at most 1/sqrt(eps) of the dtype, beyond which the
    product of two values has no digit left for a difference of 1 (float16: 32, bfloat16: 11).
    Such an array also holds the largest and the lowest value allowed (one of them if it has one
    element), up to huge: hypothesis fills most of an array with one value, which is beyond exp's
    overflow in 1 array in 4 only.
    """
    intervals = domain(values)
    ordinary = _spans([interval.ordinary() for interval in intervals], target.dtype, values)
    limits = torch.finfo(getattr(torch, target.dtype))
    elements = [_normal(low, high, float(limits.tiny)) for low, high in ordinary]
    if not extremes:
        return hnp.arrays(np.float64, shape, elements=st.one_of(elements))
    huge, tiny = min(1e4, float(limits.eps) ** -0.5), 1e3 * float(limits.tiny)
    allowed = _spans(intervals, target.dtype, values)
    elements += [
        _normal(max(low, -bound), min(high, bound), float(limits.tiny))
        for bound in (huge, tiny)
        for low, high in allowed
        if max(low, -bound) <= min(high, bound)
    ]
    drawn = hnp.arrays(np.float64, shape, elements=st.one_of(elements))
    size = int(np.prod(shape))
    edges = [_nearest_allowed(-huge, allowed), _nearest_allowed(huge, allowed)]
    if size == 0:
        return drawn
    return st.tuples(drawn, st.integers(0, size - 1), st.permutations(edges)).map(_put)


def _normal(low: float, high: float, smallest: float) -> st.SearchStrategy[float]:
    """Floats in [low, high] that are 0 or at least `smallest` (the target dtype's smallest normal
    number) in magnitude: XLA on a CPU and GPU kernels flush subnormal numbers to 0, so that a
    subnormal input tells a port's library apart, not the port. A subnormal draw becomes 0, or the
    smallest normal number of its sign where [low, high] holds no 0."""

    def flushed(value: float) -> float:
        if value == 0 or abs(value) >= smallest or max(abs(low), abs(high)) < smallest:
            return value
        return 0.0 if low <= 0 <= high else float(np.copysign(smallest, value))

    return st.floats(low, high).map(flushed)


def _spans(intervals: Sequence[Interval], dtype: str, values: object) -> list[tuple[float, float]]:
    """The closed ranges of `dtype`'s values in `intervals` (`Interval.inside`); refused where
    there are none."""
    found = [span for interval in intervals if (span := interval.inside(dtype)) is not None]
    if not found:
        msg = (
            f"values {values!r}: {dtype} holds no value in them; widen them, or leave {dtype} "
            "out of the Spec's dtypes"
        )
        raise ValueError(msg)
    return found


def _nearest_allowed(value: float, allowed: Sequence[tuple[float, float]]) -> float:
    """The value within `allowed` (closed ranges) nearest to `value`."""
    return min((min(max(value, low), high) for low, high in allowed), key=lambda v: abs(v - value))


def _put(drawn: tuple[NDArray[np.float64], int, list[float]]) -> NDArray[np.float64]:
    """The array with the edges from the flat index on (as many as it has room for)."""
    array, index, edges = drawn
    for offset, value in enumerate(edges[: array.size]):
        array.flat[(index + offset) % array.size] = value
    return array


def bounded(values: tuple[float | None, float | None]) -> tuple[float, float]:
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
    parameters: Mapping[str, Any] | None = None,
) -> st.SearchStrategy[tuple[NDArray[Any], ...]]:
    """One NumPy array per operand of `spec`, in its order, as `spec` allows: float64, or int64
    for its `integers`; `parameters`: the values of those that its bounds name.

    With `extremes`, each call first draws whether its arrays hold extreme values (`arrays`):
    the ordinary calls, the simplest example, are drawn and compared in every run, even where
    the extreme ones are beyond the target's dtype."""
    spec = as_spec(spec, min_dims)
    parameters = parameters or {}
    drawn = shapes(target, spec, max_dims=max_dims, max_side=max_side, parameters=parameters)

    def arrays_of(extreme: bool, found: dict[str, tuple[int, ...]]) -> st.SearchStrategy[Any]:
        return st.tuples(
            *(
                integers(found[name], *spec.integer_range(name, found, parameters))
                if name in spec.integers
                else arrays(target, found[name], extremes=extreme, values=spec.domain(name))
                for name in spec.shapes
            )
        )

    # A boolean per call, drawn first: about half the calls are ordinary, the simplest one too.
    chosen = st.booleans() if extremes else st.just(False)
    return st.tuples(chosen, drawn).flatmap(lambda pair: arrays_of(*pair))


def integers(shape: tuple[int, ...], low: int, high: int) -> st.SearchStrategy[NDArray[np.int64]]:
    """Int64 arrays of `shape` with values from `low` up to (not including) `high`."""
    if low >= high:  # no value to draw: only an array without elements
        return st.just(np.zeros(shape, np.int64)) if 0 in shape else st.nothing()
    return hnp.arrays(np.int64, shape, elements=st.integers(low, high - 1))


def labels(shape: tuple[int, ...], classes: int) -> st.SearchStrategy[NDArray[np.int64]]:
    """Integer class labels in [0, classes) of the given shape."""
    return integers(shape, 0, classes)


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Positive numbers from `low` to `high`, as many per decade: ``eps``, ``temperature``."""
    return st.floats(np.log10(low), np.log10(high)).map(lambda exponent: float(10.0**exponent))
