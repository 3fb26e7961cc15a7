"""What an algorithm takes: `Spec`, its operands' shapes and the constraints on their sizes,
values and dtypes, declared once in its test module and honoured by every helper."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from .capabilities import CAPABILITIES
from .core import DTYPES, VALUES

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


#: An operand's values as a `Spec` states them: ``(low, high)``, None for no bound; or interval
#: notation, ``"(0, 10]"``, ``"[-10, -0.5] | [0.5, 10]"`` (`domain`).
Values = tuple[float | None, float | None] | str
#: How to write a domain, for the messages that refuse one.
_HOW = (
    'write intervals such as "(0, 10]" (a round bracket leaves that end out, a square one keeps '
    'it), "[-10, -0.5] | [0.5, 10]" (a union: values away from a hole), "(0, inf)" (no bound); '
    "or (low, high), None for no bound"
)
_INTERVAL = re.compile(r"\s*([\[(])\s*([^,\[\]()|]+?)\s*,\s*([^,\[\]()|]+?)\s*([\])])\s*")


@dataclass(frozen=True)
class Interval:
    """One interval of an operand's values: from `low` to `high` (-inf, inf: no bound), each end
    included unless it is open: ``Interval(0.0, 10.0, open_low=True)`` is ``(0, 10]``."""

    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False

    def __post_init__(self) -> None:
        if math.isnan(self.low) or math.isnan(self.high) or self.low == math.inf:
            msg = f"{self}: its ends must be numbers, low below inf"
            raise ValueError(msg)
        if self.high == -math.inf or self.low > self.high:
            msg = f"{self}: its low end {self.low:g} is above its high end {self.high:g}"
            raise ValueError(msg)
        if self.low == self.high and (self.open_low or self.open_high):
            msg = f"{self}: holds no value; write [{self.low:g}, {self.low:g}] for that value alone"
            raise ValueError(msg)

    def __str__(self) -> str:
        return (
            f"{'(' if self.open_low else '['}{self.low:g}, {self.high:g}"
            f"{')' if self.open_high else ']'}"
        )

    def __contains__(self, value: float) -> bool:
        above = value > self.low if self.open_low else value >= self.low
        below = value < self.high if self.open_high else value <= self.high
        return above and below

    def ordinary(self) -> Interval:
        """Where the ordinary draws come from: `VALUES` (-10 to 10) for a missing bound, or as
        wide a range beside the other end where that range lies beyond it."""
        width = VALUES[1] - VALUES[0]
        low, high = self.low, self.high
        if low == -math.inf:
            low = VALUES[0] if VALUES[0] < high else high - width
        if high == math.inf:
            high = VALUES[1] if VALUES[1] > low else low + width
        return replace(self, low=low, high=high)

    def inside(self, dtype: str) -> tuple[float, float] | None:
        """The values of `dtype` in this interval, as the closed range ``(lowest, highest)`` of
        float64 numbers that `dtype` holds exactly: a float64 value within it stays within it
        as it rounds to `dtype`. An open end is replaced by the nearest value of `dtype` inside
        (``np.nextafter``), an open end at 0 by `dtype`'s smallest normal number: a subnormal
        holds too few digits, and libraries flush them (``torch.log(5e-324)`` is -inf). An end
        beyond `dtype`'s largest value, by that value; no bound stays infinite. None where
        `dtype` holds no value of the interval."""
        return _inside(self, dtype)


@functools.cache
def _inside(interval: Interval, dtype: str) -> tuple[float, float] | None:
    low = _nearest(interval.low, dtype, 1.0, strictly=interval.open_low)
    high = _nearest(interval.high, dtype, -1.0, strictly=interval.open_high)
    return (low, high) if low <= high else None


def _nearest(end: float, dtype: str, direction: float, *, strictly: bool) -> float:
    """The value of `dtype` nearest to `end` on the side of `direction` (1: at or above it, -1:
    at or below it), beyond it where `strictly`; an infinite end as it is."""
    if math.isinf(end):
        return end
    if strictly and end == 0:
        return direction * float(torch.finfo(getattr(torch, dtype)).tiny)
    found = torch.tensor(end, dtype=torch.float64).to(getattr(torch, dtype))
    towards = torch.tensor(direction * math.inf, dtype=found.dtype)
    while (float(found) - end) * direction < 0 or (strictly and float(found) == end):
        found = torch.nextafter(found, towards)
    return float(found)


def domain(values: object) -> tuple[Interval, ...]:
    """The intervals of `values` (`Values`): ``(low, high)`` (None: no bound), one closed
    interval; or interval notation, a round bracket leaving its end out, a square one keeping
    it, ``|`` joining intervals (a union: a hole between them), ``inf`` for no bound:
    ``"(0, 10]"``, ``"[-10, -0.5] | [0.5, 10]"``, ``"(0, inf)"``; or intervals already made.
    Refused, with what to type, where it is none of them."""
    if isinstance(values, str):
        return _parsed(values)
    if isinstance(values, Interval):
        return (values,)
    if isinstance(values, Sequence) and values and all(isinstance(v, Interval) for v in values):
        return tuple(values)
    if not isinstance(values, tuple | list) or len(values) != 2:
        msg = f"{values!r}: {_HOW}"
        raise ValueError(msg)
    low, high = values
    return (Interval(_end(low, -math.inf), _end(high, math.inf)),)


def _end(end: object, infinite: float) -> float:
    """A bound of a ``(low, high)`` range as a number, `infinite` for None."""
    if end is None:
        return infinite
    if isinstance(end, bool) or not isinstance(end, int | float):
        msg = f"{end!r} is not a number; {_HOW}"
        raise ValueError(msg)  # noqa: TRY004  # a Spec's mistake, as for its other values
    return float(end)


@functools.cache
def _parsed(text: str) -> tuple[Interval, ...]:
    intervals = []
    for part in text.split("|"):
        found = _INTERVAL.fullmatch(part)
        if found is None:
            msg = f"{text!r}: {part.strip()!r} is not an interval; {_HOW}"
            raise ValueError(msg)
        opening, low, high, closing = found.groups()
        try:
            ends = [float(end) for end in (low, high)]
        except ValueError:
            msg = f"{text!r}: {low!r} or {high!r} is not a number; {_HOW}"
            raise ValueError(msg) from None
        try:
            intervals.append(Interval(ends[0], ends[1], opening == "(", closing == ")"))
        except ValueError as refused:
            msg = f"{text!r}: {refused}; {_HOW}"
            raise ValueError(msg) from None
    return tuple(intervals)


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
        Each floating operand's values: ``(low, high)``, None for no bound: ``{"p": (0.0,
        1.0)}``; or in interval notation, a round bracket leaving that end out, ``|`` joining
        intervals, ``inf`` for no bound: ``{"x": "(0, 10]"}`` (a logarithm: 0 left out),
        ``{"x": "[-10, -0.5] | [0.5, 10]"}`` (a reciprocal: values away from 0), ``{"p": "(0,
        1)"}``. Every draw honours it in the target's dtype too: a value rounds to that dtype,
        never onto an excluded end or into a hole (an open end at 0 is drawn from the dtype's
        smallest normal number on). A missing bound is -10 or 10 (`VALUES`) for ordinary draws;
        the extreme draws go up to 1e4 in magnitude, and put the lowest and largest allowed
        value into some arrays. Unlisted operands: `VALUES`, -10 to 10.
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
    no_gradient
        Why the ports have no derivative (``torch.floor_divide``, ``heaviside``,
        ``torch.special.bessel_j0`` return no graph): where it is given, the gradient tests
        skip with that reason.
    cannot_hold
        For a dtype (among `DTYPES`), why it cannot hold the problem for some draws: ``{"float16":
        "exp(x) overflows from 11"}``. A test in that dtype that compared nothing is then skipped,
        naming this declaration, instead of failing.
    requires
        The capabilities every port must have, among ``"second_derivative"``,
        ``"forward_mode"``, ``"vmap"`` and ``"one_graph"`` (capabilities.py): where a port
        lacks one that is not required, the test of it is skipped, quoting the library's
        refusal; where it is required, that test fails. A wrong value fails either way.

    A bound that names a parameter takes its value from ``parameters=`` of `operands`,
    `shapes`, `edge_operands` and `sized_operands`: draw that parameter first, and pass
    ``parameters=DEFAULTS`` for the fixed operands.
    """

    shapes: Mapping[str, str]
    min_dims: int = 0
    sides: Mapping[str, tuple[Bound, Bound]] = field(default_factory=dict)
    values: Mapping[str, Values] = field(default_factory=dict)
    multiples: Mapping[str, Bound] = field(default_factory=dict)
    integers: Mapping[str, tuple[Bound, Bound]] = field(default_factory=dict)
    dtypes: tuple[str, ...] = DTYPES
    no_gradient: str = ""
    cannot_hold: Mapping[str, str] = field(default_factory=dict)
    requires: Collection[str] = frozenset()

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
        for name, values in self.values.items():
            try:
                domain(values)
            except ValueError as refused:
                msg = f"values {name!r}: {refused}"
                raise ValueError(msg) from None
        unknown = set(self.dtypes) - set(DTYPES)
        if unknown or not self.dtypes:
            msg = f"dtypes {self.dtypes}: choose one or more of {DTYPES}"
            raise ValueError(msg)
        reason: object = self.no_gradient
        if not isinstance(reason, str):
            msg = (
                f"no_gradient={reason!r}: give the reason the ports have no derivative, "
                'as a string: no_gradient="torch.floor_divide returns no graph"'
            )
            raise TypeError(msg)
        for dtype, why in self.cannot_hold.items():
            if dtype not in DTYPES:
                msg = f"cannot_hold {dtype!r}: not a dtype; choose among {DTYPES}"
                raise ValueError(msg)
            if not str(why).strip():
                msg = (
                    f"cannot_hold {dtype!r}: give the reason {dtype} cannot hold the problem, as "
                    f"a string: { {dtype: 'exp(x) overflows'} }"
                )
                raise ValueError(msg)
        if isinstance(self.requires, str) or set(self.requires) - set(CAPABILITIES):
            msg = (
                f"requires {self.requires!r}: give a set of capabilities among "
                f"{sorted(CAPABILITIES)}, e.g. requires={{'forward_mode'}}"
            )
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

    def domain(self, name: str) -> tuple[Interval, ...]:
        """`name`'s values, as the intervals they lie in (one, unbounded, where unlisted)."""
        return domain(self.values.get(name, (None, None)))

    def value_range(self, name: str) -> tuple[float | None, float | None]:
        """The lowest and highest of `name`'s values, None where it has no bound (the holes
        and open ends are in `domain`)."""
        intervals = self.domain(name)
        low = min(interval.low for interval in intervals)
        high = max(interval.high for interval in intervals)
        return (None if low == -math.inf else low, None if high == math.inf else high)

    def integer_range(
        self, name: str, shapes: Mapping[str, tuple[int, ...]], parameters: Mapping[str, Any]
    ) -> tuple[int, int]:
        """The integer operand `name`'s values, from low up to (not including) high, for these
        operand shapes and parameters."""
        known = {**parameters, **self.letter_sizes(shapes)}
        low, high = self.integers[name]
        return _value(low, known), _value(high, known)


def as_spec(spec: Spec | Mapping[str, str], min_dims: int | None = None) -> Spec:
    """`spec`, or a `Spec` of these shapes (test modules written before `Spec` pass a dict)."""
    if not isinstance(spec, Spec):
        return Spec(spec, min_dims=min_dims or 0)
    if min_dims is not None and min_dims != spec.min_dims:
        return replace(spec, min_dims=min_dims)
    return spec
