"""What an algorithm takes: `Spec`, its operands' shapes and the constraints on their sizes,
values and dtypes, declared once in its test module and honoured by every helper."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .core import DTYPES

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


def as_spec(spec: Spec | Mapping[str, str], min_dims: int | None = None) -> Spec:
    """`spec`, or a `Spec` of these shapes (test modules written before `Spec` pass a dict)."""
    if not isinstance(spec, Spec):
        return Spec(spec, min_dims=min_dims or 0)
    if min_dims is not None and min_dims != spec.min_dims:
        return replace(spec, min_dims=min_dims)
    return spec
