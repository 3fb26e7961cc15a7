"""What the function takes: a `Spec` of the operands, and the inputs it allows (drawn by
hypothesis, or fixed: edge cases and sizes)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import torch
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

from .core import VALUES
from .targets import Target

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
    return _drawn_shapes(spec, max_dims, max_side)


# Defined once: `st.composite` reads the function's source when it decorates it (~2 ms), and
# `shapes` runs for every example.
@st.composite
def _drawn_shapes(
    draw: st.DrawFn, spec: Spec, max_dims: int, max_side: int
) -> dict[str, tuple[int, ...]]:
    batch = draw(hnp.array_shapes(min_dims=spec.min_dims, max_dims=max_dims, max_side=max_side))
    sides: dict[str, int] = {}
    for letter in spec.order():
        low, high = spec.bounds(letter, sides, max_side)
        if low > high:
            reject()  # hypothesis draws again
        sides[letter] = draw(st.integers(low, high))
    return spec.build(tuple(batch), sides)


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
    Such an array also holds the largest and the lowest value allowed (one of them if it has one
    element): hypothesis fills most of an array with one value, which is beyond exp's overflow in
    1 array in 4 only.
    """
    low, high = _resolve(values)
    elements = [st.floats(low, high)]
    if not extremes:
        return hnp.arrays(np.float64, shape, elements=elements[0])
    limits = torch.finfo(getattr(torch, target.dtype))
    huge, tiny = min(1e4, float(limits.eps) ** -0.5), 1e3 * float(limits.tiny)
    lowest = -np.inf if values[0] is None else values[0]
    highest = np.inf if values[1] is None else values[1]
    elements += [
        st.floats(max(lowest, -bound), min(highest, bound))
        for bound in (huge, tiny)
        if max(lowest, -bound) <= min(highest, bound)
    ]
    drawn = hnp.arrays(np.float64, shape, elements=st.one_of(elements))
    size = int(np.prod(shape))
    edges = [max(lowest, -huge), min(highest, huge)]
    if size == 0:
        return drawn
    return st.tuples(drawn, st.integers(0, size - 1), st.permutations(edges)).map(_put)


def _put(drawn: tuple[NDArray[np.float64], int, list[float]]) -> NDArray[np.float64]:
    """The array with the edges from the flat index on (as many as it has room for)."""
    array, index, edges = drawn
    for offset, value in enumerate(edges[: array.size]):
        array.flat[(index + offset) % array.size] = value
    return array


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
