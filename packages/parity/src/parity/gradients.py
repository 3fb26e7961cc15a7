"""Gradients against finite differences of the float64 reference."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
    count_unmeasured,
    declaration,
    quiet,
    run_reference,
)
from .room import check_type_dtype_device, excused, rounding_of
from .targets import Target
from .values import argument_names, expected_from, run_port

#: The weighted terms ``w * f`` of the loss, from every operand (float64, or long double where
#: the reference computes in it).
Terms = Callable[[list[NDArray[Any]]], NDArray[Any]]
#: NumPy's long double where it is wider than float64 (x86: a 64-bit mantissa), else None.
LONG = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else None
EPS = float(np.finfo(np.float64).eps)
LARGEST = float(np.finfo(np.float64).max)


def _ladder(x: float) -> list[float]:
    """The finer steps at `x`, largest first: h/10, h/100, ... (`FINER_STEPS` of them); where
    0 < |x| < h, steps of `DIFFERENCE_STEP` times |x| itself (a pole at 0: 1/x at 4e-269); then,
    by factors of 1e4 down to float64's smallest normal number, steps for a regime narrower still
    (a period of 1e-24 at x = 0: fmod). The rounding error over the step ends the ladder first,
    wherever the function is not tiny."""
    h = DIFFERENCE_STEP * max(1.0, abs(x))
    steps = {h * 10.0**-k for k in range(1, FINER_STEPS + 1)}
    if 0 < abs(x) < h:
        steps |= {DIFFERENCE_STEP * abs(x) * 10.0**-k for k in range(3)}
    step = h * 10.0**-FINER_STEPS
    while (step := step * 1e-4) > np.finfo(np.float64).tiny:
        steps.add(step)
    return sorted(steps, reverse=True)


#: Why `Differences.finer` passes an element it cannot measure.
STRADDLED = "a pole, a jump or a period inside every finite-difference step"
KINK = "no derivative at a kink, where the port's gradient is not finite"
EDGE = "the end of the reference's domain, where only one side has a slope"
ALIASED = (
    "features finer than x's spacing (a narrow period): every finite-difference step aliases them"
)
#: `Differences.aliased` looks at x, then at `PROBES` - 1 points whose other operands move by a
#: random relative amount up to `NEARBY`; a period's range of values may shrink by up to
#: `SPREAD_LOSS` over the ladder (a slope's shrinks with the step: 1e9 over the ladder at x = 9),
#: and by up to `SPREAD_LOSS_LONG` in long double (rounding noise shrinks 2048-fold there).
PROBES = 3
SPREAD_LOSS = 1e3
SPREAD_LOSS_LONG = 16.0


def _slopes(
    terms: Callable[[NDArray[Any]], NDArray[Any]],
    x: NDArray[Any],
    index: tuple[int, ...],
    step: float,
    rounding: Any,
) -> tuple[float, float, float, float, float]:
    """The forward and backward differences of ``sum(terms)`` at element `index` of `x` with
    `step`, the central ones with `step` and with twice `step` (NaN where a term is not finite, or
    `terms` raises, there), and their rounding error: the sum of `rounding` over the terms that
    change. Each term is differenced before the sum: the terms the element does not reach cancel
    exactly instead of adding their rounding. In `x`'s dtype (long double too)."""
    center = x[index]
    values = {}
    for offset in (-2, -1, 0, 1, 2):
        moved = np.array(x, copy=True)  # an array, 0-d too, whatever NumPy returned
        moved[index] = center + offset * step
        try:
            values[offset] = (moved[index], terms(moved))
        except Exception:  # noqa: BLE001 - outside the reference's domain: not compared here
            values[offset] = (moved[index], np.full(np.shape(rounding), np.nan))
    changed = np.zeros(np.shape(rounding), dtype=bool)
    for _, y in values.values():
        changed |= y != values[0][1]

    def slope(start: int, stop: int) -> float:
        (x0, y0), (x1, y1) = values[start], values[stop]
        return float(np.sum(y1 - y0) / (x1 - x0)) if x1 != x0 else float("nan")

    noise = float(np.sum(np.where(changed, rounding, 0.0)))
    return slope(0, 1), slope(-1, 0), slope(-1, 1), slope(-2, 2), noise


def _beyond(forward: float, backward: float, got: float) -> bool:
    """Whether the exact slope is beyond float64 (both one-sided differences of one sign, within
    `ROOM` of its largest value) and `got` has that sign and is as large, within `ROOM`: the
    backward pass may overflow on the way (1/x's gradient squares the result first)."""
    smaller = min(abs(forward), abs(backward))
    sign = np.sign(forward)
    return bool(
        sign == np.sign(backward) != 0
        and ROOM * smaller >= LARGEST
        and np.sign(got) == sign
        and ROOM * abs(got) >= min(smaller, LARGEST)
    )


@dataclass(frozen=True)
class Differences:
    """Finite differences of a loss, ``sum(terms)``, with respect to each element of one operand,
    and their own estimated error (module docstring, "Gradients")."""

    terms: Terms
    operands: list[NDArray[Any]]
    position: int
    rounding: NDArray[np.float64]  # each term's own rounding error, in float64
    central: NDArray[np.float64]  # step h
    forward: NDArray[np.float64]
    backward: NDArray[np.float64]
    error: NDArray[np.float64]  # |central - central with step 2h| + rounding / h
    flat: NDArray[np.bool_]  # no change, at either step, beyond the terms' rounding
    #: Elements that `finer` passed unmeasured, with the reason (`KINK`, `STRADDLED`).
    unmeasured: dict[tuple[int, ...], str] = field(default_factory=dict)

    @classmethod
    def of(
        cls, terms: Terms, operands: list[NDArray[Any]], position: int, rounding: Any
    ) -> Differences:
        """The differences of ``sum(terms)`` at the operands, element by element of the one at
        `position`, with a step ``h = DIFFERENCE_STEP * max(1, |x_i|)``."""
        x = operands[position]
        central, forward, backward, error = (np.full(x.shape, np.nan) for _ in range(4))
        flat = np.zeros(x.shape, dtype=bool)
        along = _along(terms, operands, position)
        for index in np.ndindex(x.shape):
            h = DIFFERENCE_STEP * max(1.0, abs(float(x[index])))
            slopes = _slopes(along, x, index, h, rounding)
            forward[index], backward[index], central[index], wide, noise = slopes
            error[index] = abs(central[index] - wide) + noise / h
            flat[index] = np.max(np.abs(slopes[:4])) * h <= noise  # NaN: not flat
        return cls(terms, operands, position, rounding, central, forward, backward, error, flat)

    @property
    def x(self) -> NDArray[Any]:
        return self.operands[self.position]

    def _in(self, precision: Any) -> tuple[Any, NDArray[Any], Any]:
        """The terms along x, x and the terms' rounding error in `precision` (float64 or
        `LONG`), the reference computing in it; None for the terms where the reference does
        not compute in `precision` (SciPy's functions return float64)."""
        cast = [v.astype(precision) if v.dtype.kind == "f" else v for v in self.operands]
        along = _along(self.terms, cast, self.position)
        ratio = float(np.finfo(precision).eps) / EPS
        try:
            kept = np.asarray(along(cast[self.position])).dtype == precision
        except Exception:  # noqa: BLE001 - a reference that refuses: no such run
            kept = False
        return (along if kept else None), cast[self.position], self.rounding * ratio

    def finer(
        self, index: tuple[int, ...], got: float, allowed: float, distance: float, flat_room: float
    ) -> bool:
        """Whether `got` lies between the one-sided differences at `index` at one of the finer
        steps of `_ladder`, widened by `allowed` and by the terms' rounding error over the step: a
        feature closer to x than the step (a kink, a clamp, a pole, a period) shows there. Where
        that rounding error exceeds `allowed`, 1e-3 of the slopes and a 16th of the `distance` to
        explain (so that it can never explain that distance away), the reference computes in long
        double from then on, where it can, else the ladder ends. A finite `got` passes at a kink
        of x: slopes that stay apart over a hundredfold smaller step; an infinite one, where the
        exact slope is beyond float64 (`_beyond`); any `got` where no step of the ladder is clean
        of a pole, a jump or a period (the slopes, or their gap, grow as the step shrinks, to the
        ladder's end), and a non-finite one at a kink or on the end of the reference's domain (no
        step measures both sides), noted in `unmeasured` (-v shows it, with the reason); a `got`
        up to `flat_room`, where
        the element is flat at every step measured (no slope beyond the terms' rounding error
        over the step)."""
        x = float(self.x[index])
        runs = [self._in(np.float64)] + ([self._in(LONG)] if LONG is not None else [])
        runs = [run for run in runs if run[0] is not None]
        gaps: list[float] = []  # how far apart the two sides' slopes are, beyond the slack
        two_sided = False  # whether a step measured both sides (else x is on the domain's end)
        steep: list[float] = []  # the larger slope: it grows as 1/step over a jump or a period
        straddled = False  # a pole, a jump or a period inside the latest steps
        flat = bool(self.flat[index])
        for step in _ladder(x):
            while runs:
                along, start, rounding = runs[0]
                if start[index] + step == start[index]:
                    runs = []
                    break
                forward, backward, _, _, noise = _slopes(along, start, index, step, rounding)
                two_sided = two_sided or not (np.isnan(forward) or np.isnan(backward))
                noise /= step
                # An infinite slope counts (an overflow of the difference over the step), an
                # infinite `got` not: it would excuse any noise.
                measured = [abs(v) for v in (forward, backward) if not np.isnan(v)]
                scale = max([*measured, abs(got)] if np.isfinite(got) else measured, default=0)
                if noise <= max(allowed, 1e-3 * scale, distance / 16):
                    break
                runs.pop(0)  # too coarse: on in long double, where the reference computes in it
            if not runs:
                break
            if _beyond(forward, backward, got):
                return True
            slack = allowed + DIFFERENCE_SAFETY * noise
            if min(forward, backward) - slack <= got <= max(forward, backward) + slack:
                return True
            flat = flat and max(abs(forward), abs(backward)) <= noise
            # The two sides' slopes apart over a hundredfold smaller step (a smooth function's
            # gap shrinks with the step): a kink, no derivative to compare, where the gap stays;
            # a pole, a jump or a narrow period inside the step, where the gap or the slopes
            # grow (the function changes by about as much over a smaller step): a smaller step
            # may yet avoid it.
            gaps.append(abs(forward - backward) - 2 * slack)
            steep.append(max(abs(forward), abs(backward)))
            apart = len(gaps) >= 3 and gaps[-1] > 0 and gaps[-1] >= gaps[-3] / 2
            growing = len(steep) >= 3 and steep[-1] > 10 * steep[-3] > 0 and steep[-2] > 0
            straddled = (apart and gaps[-1] > 10 * gaps[-3]) or growing
            if apart and not straddled:
                if not np.isfinite(got):
                    self.unmeasured[index] = KINK
                return True
        if straddled:
            self.unmeasured[index] = STRADDLED
            return True
        if not two_sided and not np.isfinite(got):  # P(1, x) at x = 0: the libraries give NaN
            self.unmeasured[index] = EDGE
            return True
        if flat and abs(got) <= flat_room:
            return True
        if self.aliased(index, got):
            self.unmeasured[index] = ALIASED
            return True
        return False

    def aliased(self, index: tuple[int, ...], got: float) -> bool:
        """Whether the function has features finer than every step of `_ladder` along element
        `index` of x, so that no finite difference measures its slope (a period far below x's
        spacing: ``fmod(9, 1.2e-76)``, whose differences are aliasing noise at every step), with
        `got` finite. So it has where, at x or at a point whose other operands move by up to
        `NEARBY` (``fmod(1, 2**-126)`` is exactly 0 at every float near 1; with a divisor moved
        off its power of two it is not), the function's range over the five points x + k * step
        (k = -2 ... 2) is above 0 at every step and no smaller at the ladder's end than at its
        start, within `SPREAD_LOSS` (a slope's range, a kink's too, shrinks with the step), in
        long double as in float64, within `SPREAD_LOSS_LONG` (rounding noise shrinks there). A
        flat function has no range; one with a slope shows it at the ladder's first steps."""
        if LONG is None or not np.isfinite(got):
            return False
        x = float(self.x[index])
        steps = [step for step in _ladder(x) if x + step != x]
        rng = np.random.default_rng(5)
        others = [
            i for i, v in enumerate(self.operands) if i != self.position and v.dtype.kind == "f"
        ]
        for probe in range(PROBES if others else 1):
            operands = list(self.operands)
            for i in others if probe else []:
                moved = operands[i] * (1 + NEARBY * rng.uniform(-1, 1, operands[i].shape))
                operands[i] = np.asarray(moved, dtype=operands[i].dtype)
            wide = self._ranges(operands, np.float64, index, steps)
            long = self._ranges(operands, LONG, index, steps) if wide else []
            if (
                wide
                and long
                and max(wide) <= SPREAD_LOSS * min(wide)
                and SPREAD_LOSS_LONG * sum(long) >= sum(wide)
            ):
                return True
        return False

    def _ranges(
        self,
        operands: list[NDArray[Any]],
        precision: Any,
        index: tuple[int, ...],
        steps: list[float],
    ) -> list[float]:
        """At each of `steps`, the range of ``sum(terms)`` over the five points x + k * step
        (k = -2 ... 2) along element `index` of x, each term differenced before the sum, the
        reference computing in `precision`: empty unless it computes in `precision` and every
        range is finite and above 0."""
        cast = [v.astype(precision) if v.dtype.kind == "f" else v for v in operands]
        along = _along(self.terms, cast, self.position)
        x = cast[self.position]
        ranges = []
        try:
            base = np.asarray(along(x))
            if base.dtype != precision:
                return []  # the reference does not compute in `precision`
            for step in steps:
                values = [0.0]
                for offset in (-2, -1, 1, 2):
                    moved = np.array(x, copy=True)
                    moved[index] = x[index] + offset * step
                    values.append(np.sum(np.asarray(along(moved)) - base))
                spread = float(np.max(values) - np.min(values))
                if not (np.isfinite(spread) and spread > 0):
                    return []
                ranges.append(spread)
        except Exception:  # noqa: BLE001 - outside the reference's domain: nothing measured
            return []
        return ranges

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
        along = _along(self.terms, self.operands, self.position)
        low, high = np.inf, -np.inf
        for _ in range(NEIGHBOURS):
            moved = np.asarray(
                self.x + reach * (rng.uniform(-1, 1) + rng.uniform(-1, 1, self.x.shape))
            )
            step = DIFFERENCE_STEP * max(1.0, abs(float(moved[index])))
            ends = []
            for offset in (-step, step):
                shifted = np.array(moved, copy=True)
                shifted[index] += offset
                try:
                    ends.append(float(np.sum(along(shifted))))
                except Exception:  # noqa: BLE001 - outside the reference's domain: no slope
                    break
            if len(ends) == 2 and np.isfinite(slope := (ends[1] - ends[0]) / (2 * step)):
                low, high = min(low, slope), max(high, slope)
                if low - allowed <= got <= high + allowed:
                    return True
        return False


def _along(terms: Terms, operands: list[NDArray[Any]], position: int) -> Any:
    """`terms` as a function of the operand at `position` alone, the others fixed."""

    def along(x: NDArray[Any]) -> NDArray[Any]:
        return terms([*operands[:position], x, *operands[position + 1 :]])

    return along


def assert_gradient_close(
    gradient: Any,
    differences: Differences,
    *,
    target: Target,
    what: str,
    outputs_finite: bool,
    compare_values: bool,
    flat_room: float,
    against: str = "finite differences of the float64 NumPy reference",
) -> None:
    """Fail where `gradient` lies outside the `differences` and their room (module docstring,
    "Gradients"); the message names `what` and what it was compared `against`."""
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
    low = np.minimum(np.minimum(c, f), b) - backward
    high = np.maximum(np.maximum(c, f), b) + backward
    allowed = tolerance.atol + tolerance.rtol * np.abs(c) + DIFFERENCE_SAFETY * differences.error
    distance = np.maximum(np.maximum(low - got, got - high), 0.0)
    compared = np.isfinite(low) & np.isfinite(high) & np.isfinite(differences.error)
    finite = np.isfinite(got)
    room = np.where(compared, allowed, tolerance.atol)  # for the finer steps, where non-finite
    if outputs_finite:
        # Also where a pole or a domain's end lies within the default step (log1mexp at 1e-20):
        # only a finer step can tell a true infinite slope from a NaN sent back by torch.where.
        _assert_finite_where(got, compared | ~finite, differences, room, what)
    else:  # 0 * inf: the zero weight of a non-finite output gives NaN
        compared &= finite
    if not compare_values:
        return
    matches = np.array(~compared | ~finite | (distance <= allowed))  # writable, 0-d too
    excess = np.where(matches, -np.inf, np.nan_to_num(distance / allowed, nan=np.inf))
    # A feature closer than the step (measured on a finer ladder, in long double where the
    # reference computes in it), an element flat to the last bit, or kinks that meet?
    # Worst first, up to the first element none explains: the test fails there, whatever
    # the others are.
    unexplained = ""
    for flat in np.argsort(-excess, axis=None)[: np.count_nonzero(~matches)]:
        index = tuple(int(i) for i in np.unravel_index(flat, got.shape))
        at = (index, float(got[index]), float(allowed[index]))
        matches[index] = differences.finer(
            *at, float(distance[index]), flat_room
        ) or differences.nearby(*at)
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
            f"{tuple(int(i) for i in worst)}.\n{NO_GRADIENT_HINT}"
        )
    pytest.fail(
        f"{what} differs from {against} at "
        f"{unexplained}{np.count_nonzero(~matches)} of {got.size} elements.\n"
        f"Worst at index {tuple(int(i) for i in worst)}: got {float(got[worst])!r}, central "
        f"difference {float(c[worst])!r} (one-sided: {float(b[worst])!r} and {float(f[worst])!r}); "
        f"{float(distance[worst]):.3g} away (past a margin of {backward:.3g} for the port's "
        f"rounding), {float(excess[worst]):.3g} times the {float(allowed[worst]):.3g} allowed "
        f"(atol + rtol * |central| + {DIFFERENCE_SAFETY:g} * the differences' estimated error "
        f"{float(differences.error[worst]):.3g})"
    )


def _assert_finite_where(
    got: NDArray[np.float64],
    checked: NDArray[np.bool_],
    differences: Differences,
    allowed: NDArray[np.float64],
    what: str,
) -> None:
    """Fail where `got` is not finite at a `checked` element, unless the finer steps show no
    finite slope there (`Differences.finer`: a pole, a jump, a kink, a slope beyond float64)."""
    __tracebackhide__ = True
    broken = [
        index
        for index in map(tuple, np.argwhere(checked & ~np.isfinite(got)).tolist())
        if not differences.finer(index, float(got[index]), float(allowed[index]), 0.0, 0.0)
    ]
    if broken:
        worst = broken[0]
        pytest.fail(
            f"{what} is {float(got[worst])!r} at index {worst}, where finite differences of the "
            "reference are finite (with a finer step, where a pole or the end of its domain lies "
            "within the default one): an overflow in a branch the result does not take "
            "(torch.where and jnp.where send 0 * inf = nan back through it: clamp that branch's "
            "input)?"
        )


def without_subnormals(value: NDArray[Any]) -> NDArray[Any]:
    """`value` with its subnormal elements replaced by 0 (module docstring, "Gradients")."""
    if value.dtype.kind != "f":
        return value
    return np.where(np.abs(value) < np.finfo(value.dtype).tiny, 0.0, value).astype(value.dtype)


@quiet
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
    backward pass through such values has no bound the harness can state. Where the test
    module's ``SPEC`` declares ``no_gradient``, the test is skipped with that reason.
    """
    __tracebackhide__ = True
    declared = declaration("no_gradient")
    if declared:
        pytest.skip(f"SPEC.no_gradient: {declared}")
    parameters = parameters or {}
    reference = [without_subnormals(np.asarray(value)) for value in operands]
    arguments = [target.asarray(value) for value in reference]
    expected = expected_from(function, arguments, parameters)
    gradients = BACKENDS[target.backend].gradients
    if gradients is None:
        pytest.fail(f"no gradients on {target.backend}")
    if wrt is None:
        wrt = [i for i, value in enumerate(reference) if value.dtype.kind == "f"]
    outputs = to_numpy(expected.result) if expected.error is None else np.zeros(())
    weights = np.random.default_rng(0).standard_normal(outputs.shape)
    weights = np.where(np.isfinite(outputs), weights, 0.0)
    what = f"the gradient of {function.__name__} on {target}"
    ported = BACKENDS[target.backend].runs(function)
    call = functools.partial(gradients, ported, arguments, list(wrt), weights, parameters)
    found = run_port(
        call,
        function,
        arguments,
        expected,
        what,
        parameters=parameters,
        dtype=target.dtype,
        hint=NO_GRADIENT_HINT,
    )
    if expected.error is not None or found is None:
        return
    room = rounding_of(function, reference, parameters, "float64")
    if excused(room, what):
        return
    finite = np.isfinite(outputs)
    own = np.asarray(room.room)
    rounding = np.abs(weights) * np.where(finite, EPS * np.abs(outputs) + own, 0.0)
    flat_room = FLAT_GAIN * EPS * float(np.max(np.abs(weights), initial=0))

    def terms(changed: list[NDArray[Any]]) -> NDArray[Any]:
        values = np.asarray(run_reference(function, changed, parameters))
        if values.dtype.kind != "f":
            values = values.astype(np.float64)
        return np.where(weights != 0, weights * values, 0.0)

    for position in wrt:
        differences = Differences.of(terms, reference, position, rounding)
        name = argument_names(function, len(reference))[position]
        for method, gradient in found[position].items():
            what = f"the {method} gradient of {function.__name__} for {name} on {target}"
            assert_gradient_close(
                gradient,
                differences,
                target=target,
                what=what,
                outputs_finite=bool(finite.all()),
                compare_values=compare_values,
                flat_room=flat_room,
            )
        for reason in sorted(set(differences.unmeasured.values())):
            elements = sum(why == reason for why in differences.unmeasured.values())
            count_unmeasured(f"{reason} ({name})", elements)
    count_call("compared")


#: What a gradient call's failure adds where the port has no derivative to give.
NO_GRADIENT_HINT = (
    "If the port has no derivative by design (PyTorch has none for floor_divide or heaviside; "
    "torch.special's Bessel functions return results without a graph), declare it in the test "
    'module: SPEC = parity.Spec(..., no_gradient="why"); its gradient tests then skip.'
)
