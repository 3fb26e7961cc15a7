"""Fixed operands that a `Spec` allows: the edge cases (the smallest shapes, empty ones) and
operands of a given size (for benchmarks and the fixed-input tests)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from .inputs import Spec, _as_spec, _resolve


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
