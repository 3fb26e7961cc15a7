"""What every part of the harness shares: the types it passes around, the package under
test, the numbers its rules use (tolerances, room, steps), and how it calls a function."""

from __future__ import annotations

import functools
import re
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pytest
import torch
from hypothesis import assume
from hypothesis.control import currently_in_test_context
from hypothesis.errors import Unsatisfiable
from numpy.typing import NDArray

from .summary import fewer_compared

#: A public function of the package, e.g. ``softmax``.
Function = Callable[..., Any]
#: The operands of one call (float64 or integer NumPy arrays; targets convert them).
Operands = Sequence[NDArray[Any]]
#: The parameters of one call, passed by keyword: ``{"axis": 0}``.
Parameters = Mapping[str, Any]


# Stubs scaffolded before `NotYetImplemented` existed raise a plain NotImplementedError with this
# in their message: recognised too, so that their tests stay expected failures after an update.
EARLIER_STUBS = re.compile(r"not implemented yet|has no \w+ implementation yet")


def not_yet_implemented(error: BaseException) -> bool:
    """Whether `error` says that code is not written yet (a stub, a backend without a port): an
    exception of a class named ``NotYetImplemented`` (the package's, in a repo made by the
    template), or an earlier release's stub. A library's own NotImplementedError (an operation
    without a float16 kernel) is a failure like any other."""
    written_later = any(cls.__name__ == "NotYetImplemented" for cls in type(error).__mro__)
    return written_later or (
        isinstance(error, NotImplementedError) and EARLIER_STUBS.search(str(error)) is not None
    )


#: The dtypes a target may have, the widest first: `over()` runs each one that a backend supports
#: and the test module's ``SPEC`` allows.
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


def tolerance_of(dtype: str, tolerances: Mapping[str, Tolerance] | None = None) -> Tolerance:
    """The tolerance of `dtype`: a test module's `tolerances` over `TOLERANCES`."""
    return {**TOLERANCES, **(tolerances or {})}[dtype]


#: How many times the reference's own sensitivity and rounding a port may err by: the port
#: rounds every intermediate result too, in its own order, and its library functions are less
#: exact than NumPy's (seen in correct ports: 10x for attention in bfloat16; 36x for a float16
#: cancellation that 4 rounding runs all missed; 64x for JAX's float64 tanh near -1 in GELU).
ROOM = 128.0
#: Random nudges of the inputs that measure the sensitivity (the largest change counts).
NUDGES = 8
#: How many times its sensitivity to nudges of epsilon times each operand's largest magnitude a
#: port may err by: the floor of a computation that is backward stable in norm only (an FFT).
NORMWISE = 8.0
#: Runs of the reference in the target's dtype that measure its rounding (the first unnudged),
#: and how many at most where they disagree (an ill-conditioned problem: a heavy tail of errors).
ROUNDINGS = 4
ROUNDINGS_AT_MOST = 32
#: Runs disagree where the largest error is more than this many times their median.
DISAGREE = 4.0
#: Float64 gradients against finite differences, on top of the differences' own error.
GRADIENT_TOLERANCE = Tolerance(rtol=1e-6, atol=1e-8)
#: The finite differences' step, relative to max(1, |x|): it balances their truncation error
#: (~h^2) against their rounding error (~eps/h) in float64.
DIFFERENCE_STEP = 6e-6
#: How many times its estimated error a finite difference may be off by.
DIFFERENCE_SAFETY = 4.0
#: How many times the step is divided by 10 at most, for a feature closer than the step.
FINER_STEPS = 12
#: Points near x whose differences are taken where kinks may meet (enough to draw each ordering
#: of a few tied elements), and how far away, relative to max(1, |x|): far beyond the step,
#: close enough for curvature not to matter.
NEIGHBOURS = 256
NEARBY = 1e-3
#: The largest gain a backward pass may put on float64's rounding at an element that the
#: reference, in long double too, does not depend on at any step of the ladder (F.normalize's
#: 1/eps at a zero row is 1e12): a cap on rounding, not on a slope, which the ladder measures.
FLAT_GAIN = 1e13
#: Values drawn where a `Spec` gives no range; with ``extremes``, also huge and tiny ones.
VALUES = (-10.0, 10.0)


#: Warnings about values (NumPy's floating-point ones, PyTorch's on degenerate reductions), which
#: the reference and the ports may raise alike: the values tell (and some BLAS builds raise
#: spurious ones). Other warnings (deprecations) are left to the test run's own filters.
NUMERIC_WARNINGS = (RuntimeWarning, UserWarning)


P = ParamSpec("P")
R = TypeVar("R")


def quiet(helper: Callable[P, R]) -> Callable[P, R]:
    """`helper` with NumPy's floating-point warnings off: the harness's own arithmetic on what
    a call returned (a room that overflows near float64's largest value, two infinite
    differences subtracted) gives inf and NaN, which its rules read for what they mean (an
    element that the dtype cannot hold, a difference that measures nothing), instead of a
    warning that the test run's ``filterwarnings = error`` would turn into a failure."""

    @functools.wraps(helper)
    def quietly(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True
        with np.errstate(all="ignore"):
            return helper(*args, **kwargs)

    return quietly


def run_reference(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    """`function` on NumPy arrays, its `NUMERIC_WARNINGS` silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NUMERIC_WARNINGS)
        return function(*arguments, **parameters)


def with_replaced(
    arguments: Sequence[Any], positions: Sequence[int], values: Sequence[Any]
) -> list[Any]:
    """`arguments` with those at `positions` replaced by `values`."""
    replaced = list(arguments)
    for position, value in zip(positions, values, strict=True):
        replaced[position] = value
    return replaced


def call_eagerly(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Any:
    return function(*arguments, **parameters)


@dataclass
class Tally:
    """What the harness's calls in one test compared (module docstring, "No vacuous pass")."""

    calls: int = 0
    compared: int = 0  # calls that compared a value (or an edge case's agreed refusal)
    refused: int = 0  # calls where the reference raised, on an operand with elements and axes
    excused: list[str] = field(default_factory=list)  # what the target's dtype cannot hold
    #: Elements no comparison could measure (a pole inside every finite-difference step), by reason.
    unmeasured: Counter[str] = field(default_factory=Counter)
    spec: Any = None  # the test module's SPEC, where it has one
    #: Elements `assert_close` compared, and the largest of their errors as a fraction of what
    #: was allowed there (1.0: at the limit), for the parity report (report.py); and the largest
    #: in units in the last place of the target's dtype, where the allowance is mostly relative.
    elements: int = 0
    worst: float = 0.0
    ulps: float | None = None
    #: Each capability (capabilities.py) the test exercised: "present", or "absent: " and why.
    capabilities: dict[str, str] = field(default_factory=dict)


#: The user property that holds what a test measured (`tallied`): calls compared, elements,
#: the worst error as a fraction of the allowed one.
MEASURED = "parity_measured"
#: The tally of the test running now; conftest.py starts it before each test and reads it after.
TALLY = Tally()


def declaration(name: str) -> Any:
    """What the running test module's ``SPEC`` declares as `name` (``no_gradient``), or None."""
    return getattr(TALLY.spec, name, None)


def count_call(outcome: str, reason: str = "") -> None:
    """Note one call's outcome: "compared", "refused" or "excused" (with its `reason`)."""
    TALLY.calls += 1
    if outcome == "compared":
        TALLY.compared += 1
    elif outcome == "refused":
        TALLY.refused += 1
        if currently_in_test_context():
            assume(False)  # a draw outside the reference's domain: hypothesis draws another
    else:
        TALLY.excused.append(reason)


def note_closeness(elements: int, worst: float, ulps: float | None = None) -> None:
    """Note a comparison of `elements`, whose worst error was `worst` times the allowed one and
    `ulps` units in the last place (None: no element was measured so)."""
    TALLY.elements += elements
    TALLY.worst = max(TALLY.worst, worst)
    if ulps is not None:
        TALLY.ulps = max(TALLY.ulps or 0.0, ulps)


def in_ulps(
    error: NDArray[np.float64],
    want: NDArray[np.float64],
    dtype: str,
    tolerance: Tolerance,
    measured: NDArray[np.bool_] | bool = True,
) -> float | None:
    """The largest error in units in the last place of `dtype` at the expected value, over the
    `measured` elements where the allowance is mostly relative (rtol * |expected| >= atol); None
    where there is none. Nearer zero an error reads better as a fraction of the allowance: there
    a unit in the last place shrinks to the dtype's smallest subnormal."""
    info = torch.finfo(getattr(torch, dtype))
    relative = measured & np.isfinite(error) & (tolerance.rtol * np.abs(want) >= tolerance.atol)
    if not np.any(relative):
        return None
    magnitude = np.maximum(np.abs(want), info.tiny)
    ulp = np.exp2(np.floor(np.log2(magnitude))) * info.eps
    return float(np.max(error / ulp, where=relative, initial=0.0))


def note_capability(capability: str, absent: str = "") -> None:
    """Note that the port has `capability`, or lacks it for the reason `absent` (which stays)."""
    if absent or not TALLY.capabilities.get(capability, "").startswith("absent"):
        TALLY.capabilities[capability] = f"absent: {absent}" if absent else "present"


def count_unmeasured(reason: str, elements: int) -> None:
    """Note `elements` that passed unmeasured, with the `reason` no measurement was possible."""
    TALLY.unmeasured[reason] += elements


class tallied:
    """Around one test's call (conftest.py): count what the harness compares, note the count as
    the test's ``compared`` property (pytest -v shows it, JUnit XML keeps it), and fail a test
    that called the harness but compared nothing; skip it, with the reason, where only the
    target's dtype stood in the way. A class, not a generator: its skip then points at
    conftest.py, not at contextlib."""

    def __init__(self, item: pytest.Item) -> None:
        self.item = item

    def __enter__(self) -> None:
        global TALLY  # noqa: PLW0603 - one test at a time, as pytest runs them
        TALLY = Tally(spec=getattr(getattr(self.item, "module", None), "SPEC", None))

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        __tracebackhide__ = True
        # What it measured, a failing test's too (report.py sums them up).
        if TALLY.calls or TALLY.elements or TALLY.capabilities:
            measured: dict[str, object] = {"compared": TALLY.compared, "elements": TALLY.elements}
            measured |= {"worst": TALLY.worst, "ulps": TALLY.ulps}
            measured |= {"capabilities": TALLY.capabilities}
            self.item.user_properties.append((MEASURED, measured))
        if kind is not None and not issubclass(kind, Unsatisfiable):
            return False  # the test's own failure
        # Every draw refused (Unsatisfiable) is swallowed: the message below says so.
        if not TALLY.calls:
            return True  # a test of the reference alone, or of the rejection of bad inputs
        self.item.user_properties.append(("compared", TALLY.compared))
        # Why it may have compared fewer calls than its examples (summary.fewer_compared).
        asked = getattr(getattr(self.item, "obj", None), "_hypothesis_internal_use_settings", None)
        for name, count in [
            ("examples", getattr(asked, "max_examples", 0)),
            ("refused", TALLY.refused),
            ("excused", len(TALLY.excused)),
        ]:
            self.item.user_properties.append((name, count))
        if TALLY.unmeasured:
            self.item.user_properties.append(("unmeasured", dict(TALLY.unmeasured)))
        if TALLY.compared:
            return True
        if TALLY.excused:
            self._unheld(TALLY.excused[0])
        pytest.fail(
            f"this test compared nothing: the NumPy reference refused every input it was given "
            f"({TALLY.refused} calls; the port refused them too). Its inputs are outside what the "
            "reference accepts: check the test's SPEC (shapes, sides, values), the parameters its "
            "draw() gives, or the fixed operands, and call the reference on one of them to see why."
        )

    def _unheld(self, reason: str) -> None:
        """Skip a test that compared nothing because its target's dtype could not hold the
        problem, where ``SPEC.cannot_hold`` declares so for that dtype; fail it elsewhere: the
        draws may have crowded out every ordinary call."""
        __tracebackhide__ = True
        callspec = getattr(self.item, "callspec", None)
        dtype = getattr(callspec.params.get("target") if callspec else None, "dtype", "")
        declared = (declaration("cannot_hold") or {}).get(dtype)
        if declared:
            pytest.skip(f"nothing compared: {reason}; SPEC.cannot_hold[{dtype!r}]: {declared}")
        pytest.fail(
            f"this test compared nothing: {reason}, in every call. Where {dtype or 'this dtype'} "
            "cannot hold the problem for the inputs the test draws, declare it in the test "
            f"module: SPEC = parity.Spec(..., cannot_hold={ {dtype: 'why'} }); the test is "
            "then skipped with that reason. Otherwise draw inputs it can hold (SPEC's values)."
        )


def teststatus(
    report: pytest.TestReport | pytest.CollectReport,
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """A passed test's status with how many calls compared values, and the elements that passed
    unmeasured, with the reason: ``PASSED (10 compared)`` under ``pytest -v`` (conftest.py's
    `pytest_report_teststatus`). A collection report (a module that failed to import) has no
    properties: pytest reports it as usual."""
    if not isinstance(report, pytest.TestReport) or report.when != "call" or not report.passed:
        return None
    properties: dict[str, Any] = dict(report.user_properties)
    compared = properties.get("compared")
    if compared is None:
        return None
    unmeasured = "".join(
        f"; {count} element{'s' * (count > 1)} unmeasured: {reason}"
        for reason, count in properties.get("unmeasured", {}).items()
    )
    fewer = fewer_compared(compared, properties)
    return "passed", ".", (f"PASSED ({compared} compared{fewer}{unmeasured})", {"green": True})
