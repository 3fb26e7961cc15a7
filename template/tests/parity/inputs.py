"""What the function takes: a `Spec` of the operands, and the inputs it allows (drawn by
hypothesis, or fixed: edge cases and sizes)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

from .core import DTYPES, VALUES
from .targets import Target

#: A bound: a number, or a name with an optional whole factor: a letter of the shapes (its drawn
#: size: ``"n"``, ``"3h"``) or an int parameter (its value, passed as ``parameters=``).
Bound = int | str
_BOUND = re.compile(r"([0-9]*)([a-z_][a-z0-9_]*)")


def _named(bound: Bound) -> str | None:
    """The letter or parameter that `bound` names, None for a number."""
    if isinstance(bound, int):
        return None
    found = _BOUND.fullmatch(bound)
    if found is None:
        msg = f"bound {bound!r}: write a number, a letter or a parameter, with a factor: 'n', '3h'"
        raise ValueError(msg)
    return found[2]


def _value(bound: Bound, known: Mapping[str, Any]) -> int:
    """`bound`'s number, given the letters' sizes and the parameters in `known`."""
    name = _named(bound)
    if name is None:
        return int(bound)
    if not isinstance(known.get(name), int):
        msg = (
            f"bound {bound!r}: {name!r} is neither a letter of the shapes nor an int parameter "
            f"given (pass its value in the helper's parameters=, e.g. parameters=DEFAULTS)"
        )
        raise ValueError(msg)  # noqa: TRY004  # a Spec's mistake, as for the other bounds
    factor = _BOUND.fullmatch(str(bound))[1]  # type: ignore[index]  # checked by _named
    return int(factor or 1) * known[name]


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
        first, or an int parameter, with a whole factor: ``{"k": (1, "n")}`` keeps a kernel no
        longer than the input, ``{"e": ("3h", "3h")}`` makes e three times h (a fused q, k, v
        projection). Unlisted letters: 1 to ``max_side`` (5).
    multiples
        The letters whose size must be a multiple of a number, a letter or an int parameter:
        ``{"d": 2}`` an even size (rotary embeddings: pairs of features), ``{"c": "groups"}``
        channels that split into groups. The sizes drawn are the multiples within `sides`;
        for an unlisted letter, up to ``max_side`` or twice the multiple, the larger.
    values
        Each floating operand's values as ``(low, high)``, None for no bound:
        ``{"p": (0.0, 1.0)}``. Unlisted operands: `VALUES`, -10 to 10.
    integers
        The operands of integers (class labels, indices, counts), each with its values from
        ``low`` up to, not including, ``high``; a bound may be a letter (its size) or an int
        parameter: ``{"labels": (0, "c")}`` labels below C. They are drawn as int64 arrays,
        converted to every target as they are (never to its floating dtype), and have no
        gradient; the dispatch must accept integers for them (``integer_operands=`` of
        `dispatch_error`, which the scaffold writes for ``NAME:AXES:int``).
    dtypes
        The floating dtypes that the ports support, among `DTYPES` (default: all). Tests of a
        target in another dtype are skipped, with the reason (``conftest.py``): leave out
        float16 where a library has no such kernel (Cholesky, FFT on a CPU). To leave a dtype
        out of one test only, give it ``@parity.over(dtypes=[...])``.

    A bound that names a parameter takes its value from ``parameters=`` of `operands`,
    `shapes`, `edge_operands` and `sized_operands`: draw that parameter first, and pass
    ``parameters=DEFAULTS`` for the fixed operands.
    """

    shapes: Mapping[str, str]
    min_dims: int = 0
    sides: Mapping[str, tuple[Bound, Bound]] = field(default_factory=dict)
    values: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    multiples: Mapping[str, Bound] = field(default_factory=dict)
    integers: Mapping[str, tuple[Bound, Bound]] = field(default_factory=dict)
    dtypes: tuple[str, ...] = DTYPES

    def __post_init__(self) -> None:
        letters = set(self.letters)
        for name, dims in self.shapes.items():
            if not re.fullmatch(r"(\.\.\.)?[a-z]*", dims):
                msg = (
                    f"shape of {name!r} is {dims!r}; write '...' (batch axes) then letters: '...ld'"
                )
                raise ValueError(msg)
        for field_name, keys, known in [
            ("sides", self.sides, letters),
            ("multiples", self.multiples, letters),
            ("values", self.values, set(self.shapes)),
            ("integers", self.integers, set(self.shapes)),
        ]:
            for key in set(keys) - known:
                what = "letters of shapes" if known is letters else "operands of shapes"
                msg = f"{field_name} {key!r}: not among the {what} ({', '.join(sorted(known))})"
                raise ValueError(msg)
        for bound in [*self.multiples.values(), *self.sides.values(), *self.integers.values()]:
            for each in bound if isinstance(bound, tuple) else (bound,):
                _named(each)  # refuses what is not a bound
        for name in set(self.values) & set(self.integers):
            msg = f"{name!r} is in values and in integers: give its range in integers only"
            raise ValueError(msg)
        unknown = set(self.dtypes) - set(DTYPES)
        if unknown or not self.dtypes:
            msg = f"dtypes {self.dtypes}: choose one or more of {DTYPES}"
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

    def _after(self, letter: str) -> set[str]:
        """The letters that `letter`'s size depends on."""
        bounds = [*self.sides.get(letter, ()), self.multiples.get(letter, 1)]
        return {str(_named(b)) for b in bounds} & set(self.letters)

    def order(self) -> list[str]:
        """The letters, each after the letters its bounds and multiple name."""
        ordered: list[str] = []
        pending = self.letters
        while pending:
            ready = [letter for letter in pending if self._after(letter) <= set(ordered)]
            if not ready:
                msg = f"sides, multiples: the bounds of {pending} refer to each other in a circle"
                raise ValueError(msg)
            ordered += ready
            pending = [letter for letter in pending if letter not in ready]
        return ordered

    def sizes(self, letter: str, known: Mapping[str, Any], max_side: int) -> range:
        """The sizes `letter` may take, given the sizes drawn before it and the parameters (in
        `known`): multiples of its `multiples` entry from its low bound to its high one, a number
        capped at `max_side` (or at the smallest allowed size, where that is larger); unlisted,
        from the multiple to `max_side` or twice the multiple."""
        low, high = self.sides.get(letter, (1, None))
        step = _value(self.multiples.get(letter, 1), known)
        if step < 1:
            msg = f"multiples {letter!r}: {self.multiples[letter]!r} is {step}; it must be >= 1"
            raise ValueError(msg)
        first = -(-_value(low, known) // step) * step  # the smallest multiple from low on
        if high is None:  # two multiples at least: a mix-up of the groups shows only then
            last = max(max_side, 2 * step)
        else:
            last = _value(high, known) if isinstance(high, str) else min(high, max(max_side, first))
        return range(first, last + 1, step)

    def letter_sizes(self, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
        """Each letter's size in these operand shapes (as `build` made them)."""
        sizes: dict[str, int] = {}
        for name, dims in self.shapes.items():
            letters = dims.removeprefix("...")
            axes = shapes[name][len(shapes[name]) - len(letters) :]
            sizes.update(zip(letters, axes, strict=True))
        return sizes

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

    def integer_range(
        self, name: str, shapes: Mapping[str, tuple[int, ...]], parameters: Mapping[str, Any]
    ) -> tuple[int, int]:
        """The integer operand `name`'s values, from low up to (not including) high, for these
        operand shapes and parameters."""
        known = {**parameters, **self.letter_sizes(shapes)}
        low, high = self.integers[name]
        return _value(low, known), _value(high, known)


def _as_spec(spec: Spec | Mapping[str, str], min_dims: int | None = None) -> Spec:
    """`spec`, or a `Spec` of these shapes (test modules written before `Spec` pass a dict)."""
    if not isinstance(spec, Spec):
        return Spec(spec, min_dims=min_dims or 0)
    if min_dims is not None and min_dims != spec.min_dims:
        return replace(spec, min_dims=min_dims)
    return spec


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
    spec = _as_spec(spec, min_dims)
    parameters = parameters or {}
    if target.backend == "jax":
        count = min(max(len(JAX_BATCH), spec.min_dims), max_dims)
        sides: dict[str, int] = {}
        for i, letter in enumerate(spec.order()):
            allowed = spec.sizes(letter, {**parameters, **sides}, max_side)
            if not allowed:
                return st.nothing()  # hypothesis draws the parameters again
            # Two multiples or more where it has a step: a grouping bug shows only then.
            near = (2 + i) * allowed.step
            sides[letter] = min(allowed, key=lambda size: (abs(size - near), -size))
        return st.just(spec.build((JAX_BATCH * count)[:count], sides))
    return _drawn_shapes(spec, max_dims, max_side, parameters)


# Defined once: `st.composite` reads the function's source when it decorates it (~2 ms), and
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
    parameters: Mapping[str, Any] | None = None,
) -> st.SearchStrategy[tuple[NDArray[Any], ...]]:
    """One NumPy array per operand of `spec`, in its order, as `spec` allows: float64, or int64
    for its `integers`; `parameters`: the values of those that its bounds name."""
    spec = _as_spec(spec, min_dims)
    parameters = parameters or {}
    drawn = shapes(target, spec, max_dims=max_dims, max_side=max_side, parameters=parameters)

    def arrays_of(found: dict[str, tuple[int, ...]]) -> st.SearchStrategy[tuple[Any, ...]]:
        return st.tuples(
            *(
                integers(found[name], *spec.integer_range(name, found, parameters))
                if name in spec.integers
                else arrays(target, found[name], extremes=extremes, values=spec.value_range(name))
                for name in spec.shapes
            )
        )

    return drawn.flatmap(arrays_of)


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
