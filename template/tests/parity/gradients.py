"""Gradients against finite differences of the float64 reference."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from .backends import BACKENDS, to_numpy
from .core import (
    DIFFERENCE_SAFETY,
    DIFFERENCE_STEP,
    FINER_STEPS,
    FLAT_GAIN,
    GRADIENT_TOLERANCE,
    NEARBY,
    NEIGHBOURS,
    ROOM,
    Function,
    Operands,
    Parameters,
    count_call,
    run_reference,
)
from .room import as_float64, check_type_dtype_device, excused, rounding_of
from .targets import Target
from .values import argument_names, expected_from, run_port

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
    flat: NDArray[np.bool_]  # no change, at either step, beyond the terms' rounding

    @classmethod
    def of(cls, terms: Terms, x: NDArray[np.float64], rounding: Any) -> Differences:
        """The differences of ``sum(terms)`` at `x`, element by element, with a step
        ``h = DIFFERENCE_STEP * max(1, |x_i|)``."""
        central, forward, backward, error = (np.full(x.shape, np.nan) for _ in range(4))
        flat = np.zeros(x.shape, dtype=bool)
        for index in np.ndindex(x.shape):
            h = DIFFERENCE_STEP * max(1.0, abs(float(x[index])))
            slopes = _slopes(terms, x, index, h, rounding)
            forward[index], backward[index], central[index], wide, noise = slopes
            error[index] = abs(central[index] - wide) + noise / h
            flat[index] = np.max(np.abs(slopes[:4])) * h <= noise  # NaN: not flat
        return cls(terms, x, rounding, central, forward, backward, error, flat)

    def finer(self, index: tuple[int, ...], got: float, allowed: float, distance: float) -> bool:
        """Whether `got` lies between the one-sided differences at `index` with a step of h/10,
        h/100, ..., widened by `allowed` and by the terms' rounding error over the step: a feature
        closer to x than the step (a kink, or oscillations faster than it) shows there. The step
        shrinks while that rounding error stays within `allowed`, 1e-3 of the slopes, or a 16th of
        the `distance` to explain (so that it can never explain that distance away). A finite
        `got` passes at a kink of x: slopes that stay apart over a hundredfold smaller step."""
        x = float(self.x[index])
        step = DIFFERENCE_STEP * max(1.0, abs(x))
        gaps: list[float] = []
        for _ in range(FINER_STEPS):
            if x + step / 10 == x:
                return False
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
            # A kink: the two sides' slopes stay apart as the step shrinks a hundredfold (a
            # smooth function's gap shrinks with the step). No derivative exists there to compare.
            gaps.append(abs(forward - backward) - 2 * slack)
            if len(gaps) >= 3 and gaps[-1] > 0 and gaps[-1] >= gaps[-3] / 2:
                return bool(np.isfinite(got))
        return False

    def nearby(self, index: tuple[int, ...], got: float, allowed: float) -> bool:
        """Whether `got` lies, within `allowed`, between the smallest and the largest central
        difference at `index` at up to `NEIGHBOURS` points near x: at a point where kinks meet
        (ties in a sort, a kink at a tie), any gradient of the pieces around it, or a value
        between them, is a valid subgradient, while each element's own one-sided differences
        show only some of them. Each point moves every element by up to `NEARBY` times
        max(1, |x_i|): a shift shared by all, plus one of its own, so that orderings where all
        the tied elements lie on one side of a kink are drawn as often as the others."""
        rng = np.random.default_rng(3)
        reach = NEARBY * np.maximum(1.0, np.abs(self.x)) / 2
        low, high = np.inf, -np.inf
        for _ in range(NEIGHBOURS):
            moved = self.x + reach * (rng.uniform(-1, 1) + rng.uniform(-1, 1, self.x.shape))
            step = DIFFERENCE_STEP * max(1.0, abs(float(moved[index])))
            ends = []
            for offset in (-step, step):
                shifted = moved.copy()
                shifted[index] += offset
                try:
                    ends.append(float(np.sum(self.terms(shifted))))
                except Exception:  # noqa: BLE001 - outside the reference's domain: no slope
                    break
            if len(ends) == 2 and np.isfinite(slope := (ends[1] - ends[0]) / (2 * step)):
                low, high = min(low, slope), max(high, slope)
                if low - allowed <= got <= high + allowed:
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
    flat_room: float,
) -> None:
    __tracebackhide__ = True
    shape = differences.central.shape
    missing = gradient is None
    if not missing:
        check_type_dtype_device(gradient, shape, target=target, what=what)
    got = np.zeros(shape) if missing else to_numpy(gradient)  # None: no path, a zero gradient
    c, f, b = differences.central, differences.forward, differences.backward
    tolerance = GRADIENT_TOLERANCE
    # The port's backward rounding: an element may sum terms as large as the largest one.
    largest = float(np.max(np.abs(got[np.isfinite(got)]), initial=0))
    backward = ROOM * np.finfo(np.float64).eps * largest
    with np.errstate(invalid="ignore"):
        low = np.minimum(np.minimum(c, f), b) - backward
        high = np.maximum(np.maximum(c, f), b) + backward
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
        # Terms that change, at either step, by no more than their rounding: the reference does
        # not depend on the element beyond its own precision, and the port's gradient may be its
        # backward pass's rounding through a gain.
        noise = differences.flat & (np.abs(got) <= flat_room)
        matches = np.array(~compared | (distance <= allowed) | noise)  # writable, 0-d too
        excess = np.where(matches, -np.inf, np.nan_to_num(distance / allowed, nan=np.inf))
        # A feature closer than the step, or kinks that meet? Worst first, up to the first
        # element neither explains: the test fails there, whatever the others are.
        unexplained = ""
        for flat in np.argsort(-excess, axis=None)[: np.count_nonzero(~matches)]:
            index = tuple(int(i) for i in np.unravel_index(flat, got.shape))
            at = (index, float(got[index]), float(allowed[index]))
            matches[index] = differences.finer(*at, float(distance[index])) or (
                differences.nearby(*at)
            )
            if not matches[index]:
                unexplained = "up to "
                break
        if matches.all():
            return
        excess = np.where(matches, -np.inf, excess)
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
        f"{unexplained}{np.count_nonzero(~matches)} of {got.size} elements.\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, central "
        f"difference {float(c[worst])!r} (one-sided: {float(b[worst])!r} and {float(f[worst])!r}); "
        f"{float(distance[worst]):.3g} away (past a margin of {backward:.3g} for the port's "
        f"rounding), {float(excess[worst]):.3g} times the {float(allowed[worst]):.3g} allowed "
        f"(atol + rtol * |central| + {DIFFERENCE_SAFETY:g} * the differences' estimated error "
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


def _without_subnormals(value: NDArray[Any]) -> NDArray[Any]:
    """`value` with its subnormal elements replaced by 0 (module docstring, "Gradients")."""
    if value.dtype.kind != "f":
        return value
    return np.where(np.abs(value) < np.finfo(value.dtype).tiny, 0.0, value).astype(value.dtype)


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
    reference = [_without_subnormals(np.asarray(value)) for value in operands]
    arguments = [target.asarray(value) for value in reference]
    expected = expected_from(function, arguments, parameters)
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
    found = run_port(
        call, function, arguments, expected, what, parameters=parameters, dtype=target.dtype
    )
    if expected.error is not None or found is None:
        return
    room = rounding_of(function, reference, parameters, "float64")
    if excused(room, what):
        return
    finite = np.isfinite(outputs)
    own = np.asarray(room.room)
    rounding = np.abs(weights) * np.where(
        finite, np.finfo(np.float64).eps * np.abs(outputs) + own, 0.0
    )
    flat_room = FLAT_GAIN * np.finfo(np.float64).eps * float(np.max(np.abs(weights), initial=0))
    for position in wrt:

        def terms(x: NDArray[np.float64], position: int = position) -> NDArray[np.float64]:
            changed = [*reference[:position], x, *reference[position + 1 :]]
            values = as_float64(run_reference(function, changed, parameters))
            with np.errstate(invalid="ignore"):
                return np.where(weights != 0, weights * values, 0.0)

        differences = Differences.of(terms, reference[position], rounding)
        name = argument_names(function, len(reference))[position]
        for method, gradient in found[position].items():
            what = f"the {method} gradient of {function.__name__} for {name} on {target}"
            _assert_gradient_close(
                gradient,
                differences,
                target=target,
                what=what,
                outputs_finite=bool(finite.all()),
                compare_values=compare_values,
                flat_room=flat_room,
            )
    count_call("compared")
