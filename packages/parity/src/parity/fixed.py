"""Fixed operands that a `Spec` allows: the edge cases (the smallest shapes, empty ones) and
operands of a given size (for benchmarks and the fixed-input tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .spec import Spec, as_spec


def _spans(spec: Spec, name: str) -> list[tuple[float, float]]:
    """The closed ranges of `name`'s ordinary values (`VALUES` for a missing bound) that stay
    within its domain as they round to each of the spec's dtypes: never an excluded end."""
    found = []
    for interval in spec.domain(name):
        ranges = [interval.ordinary().inside(dtype) for dtype in ("float64", *spec.dtypes)]
        if all(ranges):
            low = max(each[0] for each in ranges if each)
            high = min(each[1] for each in ranges if each)
            found += [(low, high)] if low <= high else []
    if not found:
        msg = f"values {name!r}: {spec.values[name]!r} holds no value of {spec.dtypes}"
        raise ValueError(msg)
    return found


def _fill(spec: Spec, name: str, found: Mapping[str, tuple[int, ...]], parameters: Any) -> Any:
    """An array of `name`'s shape in `found` with one value it may take: its lowest integer, 1
    where its domain allows it, else the middle of its widest interval."""
    if name in spec.integers:
        return np.full(found[name], spec.integer_range(name, found, parameters)[0], np.int64)
    spans = _spans(spec, name)
    if any(low <= 1.0 <= high for low, high in spans):
        return np.full(found[name], 1.0)
    low, high = max(spans, key=lambda span: span[1] - span[0])
    return np.full(found[name], (low + high) / 2)


def _uniform(
    rng: np.random.Generator, spans: list[tuple[float, float]], shape: tuple[int, ...]
) -> NDArray[np.float64]:
    """Values uniform within the union of `spans` (closed ranges)."""
    if len(spans) == 1:
        return rng.uniform(*spans[0], size=shape)
    lows, highs = np.array(spans).T
    widths = highs - lows
    chances = widths / widths.sum() if widths.sum() > 0 else np.full(len(spans), 1 / len(spans))
    which = rng.choice(len(spans), size=shape, p=chances)
    drawn: NDArray[np.float64] = np.clip(
        lows[which] + widths[which] * rng.random(shape), lows[which], highs[which]
    )
    return drawn


def edge_operands(
    spec: Spec, case: str, *, parameters: Mapping[str, Any] | None = None
) -> tuple[NDArray[Any], ...]:
    """Fixed operands for an edge case: "smallest" (each letter at its smallest size, the fewest
    batch axes of size 1: 0-d operands where `min_dims` is 0) or "empty" (every side 0);
    `parameters`: the values of those that the spec's bounds name (``DEFAULTS``)."""
    parameters = parameters or {}
    found = edge_shapes(spec, parameters=parameters)[case]
    return tuple(_fill(spec, name, found, parameters) for name in spec.shapes)


def edge_shapes(
    spec: Spec | Mapping[str, str],
    *,
    min_dims: int | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, tuple[int, ...]]]:
    """The shapes of `edge_operands`, by case, then by operand."""
    spec = as_spec(spec, min_dims)
    smallest: dict[str, int] = {}
    for letter in spec.order():
        allowed = spec.sizes(letter, {**(parameters or {}), **smallest}, 1)
        if not allowed:
            msg = f"{letter!r}: the Spec allows no size for it ({spec.sides}, {spec.multiples})"
            raise ValueError(msg)
        smallest[letter] = allowed[0]
    return {
        "smallest": spec.build((1,) * spec.min_dims, smallest),
        "empty": spec.build((0,) * max(spec.min_dims, 1), dict.fromkeys(spec.letters, 0)),
    }


def sized_operands(
    spec: Spec,
    size: int,
    *,
    min_dims: int | None = None,
    seed: int = 0,
    parameters: Mapping[str, Any] | None = None,
) -> tuple[NDArray[Any], ...]:
    """Fixed random operands with about `size` elements in the largest (for benchmarks and the
    fixed-input tests): standard normal values, or uniform within declared ones (within their
    union, never an excluded end, in any of the spec's dtypes); integers uniform within theirs.
    `parameters`: the values of those that the spec's bounds name."""
    spec = as_spec(spec, min_dims)
    parameters = parameters or {}
    found = sized_shapes(spec, size, parameters=parameters)
    rng = np.random.default_rng(seed)
    drawn: list[NDArray[Any]] = []
    for name in spec.shapes:
        if name in spec.integers:
            low, high = spec.integer_range(name, found, parameters)
            drawn.append(rng.integers(low, max(low + 1, high), size=found[name]))
        elif name in spec.values:
            drawn.append(_uniform(rng, _spans(spec, name), found[name]))
        else:
            drawn.append(rng.normal(size=found[name]))
    return tuple(drawn)


def sized_shapes(
    spec: Spec | Mapping[str, str],
    size: int,
    *,
    min_dims: int | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> dict[str, tuple[int, ...]]:
    """The shapes of `sized_operands`: two axes or more, every side about the same (the allowed
    size nearest to it)."""
    spec = as_spec(spec, min_dims)
    longest = max(len(dims.removeprefix("...")) for dims in spec.shapes.values())
    count = max(spec.min_dims, 2 - longest)
    side = max(1, round(size ** (1 / (count + longest))))
    sides: dict[str, int] = {}
    for letter in spec.order():
        allowed = spec.sizes(letter, {**(parameters or {}), **sides}, side)
        if not allowed:
            msg = f"{letter!r}: the Spec allows no size for it ({spec.sides}, {spec.multiples})"
            raise ValueError(msg)
        sides[letter] = min(allowed, key=lambda found: abs(found - side))
    return spec.build((side,) * count, sides)
