"""Calling the function on the reference and on a target, and comparing their results."""

from __future__ import annotations

import functools
import inspect
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

from .backends import BACKENDS, Backend, to_numpy
from .capabilities import lacks, report_absent
from .core import (
    NUMERIC_WARNINGS,
    Function,
    Operands,
    Parameters,
    Tolerance,
    count_call,
    in_ulps,
    not_yet_implemented,
    note_capability,
    note_closeness,
    quiet,
    run_reference,
    tolerance_of,
)
from .layouts import Layout
from .room import (
    Room,
    assert_close,
    check_type_dtype_device,
    excused,
    on_the_edge,
    room_for,
    rounding_of,
)
from .targets import Target


def argument_names(function: Function, count: int) -> list[str]:
    """The names of `function`'s first `count` arguments, for messages."""
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"operand {i}" for i in range(count)]


def _snapshot(values: Sequence[Any]) -> list[NDArray[Any] | None]:
    """NumPy copies of the arrays that a call could change (None: immutable, or no data)."""
    copies: list[NDArray[Any] | None] = []
    for value in values:
        if isinstance(value, np.ndarray):
            copies.append(value.copy())
        elif isinstance(value, torch.Tensor) and value.device.type != "meta":
            copies.append(to_numpy(value))
        else:
            copies.append(None)  # JAX arrays are immutable
    return copies


def _assert_unchanged(
    function: Function, before: Sequence[NDArray[Any] | None], after: Sequence[Any], who: str
) -> None:
    __tracebackhide__ = True
    for name, old, value in zip(argument_names(function, len(after)), before, after, strict=True):
        if old is None:
            continue
        new = to_numpy(value)
        if not np.array_equal(old, new, equal_nan=True):
            changed = np.count_nonzero(~((old == new) | (np.isnan(old) & np.isnan(new))))
            pytest.fail(
                f"{who} changed its operand {name} in place ({changed} of {old.size} elements): "
                f"work on a copy (`{name} = {name} - m`, not `{name} -= m`; no out=, no `_` "
                "methods)"
            )


def _shapes(function: Function, arguments: Sequence[Any]) -> str:
    names = argument_names(function, len(arguments))
    return ", ".join(f"{n} {tuple(np.shape(a))}" for n, a in zip(names, arguments, strict=True))


@dataclass(frozen=True)
class Expected:
    """The reference's outcome for one call: its result, or the error it raised."""

    result: Any = None
    error: Exception | None = None


def expected_from(function: Function, arguments: Sequence[Any], parameters: Parameters) -> Expected:
    """The reference on float64 copies of `arguments` (any backend), checked to leave them alone."""
    __tracebackhide__ = True
    inputs = [to_numpy(argument) for argument in arguments]
    before = _snapshot(inputs)
    try:
        result = run_reference(function, inputs, parameters)
    except Exception as error:  # any error of the reference is part of the spec
        if not_yet_implemented(error):
            raise
        return Expected(error=error)
    finally:
        _assert_unchanged(function, before, inputs, f"the NumPy reference {function.__name__}")
    return Expected(result)


def run_port(
    call: Callable[[], Any],
    function: Function,
    arguments: Sequence[Any],
    expected: Expected,
    what: str,
    *,
    parameters: Parameters | None = None,
    dtype: str = "",
    hint: str = "",
    capability: str = "",
) -> Any:
    """`call()`, the target's computation, which must raise if and only if the reference raises,
    and leave `arguments` alone. Returns its result, or None where it raised as it may: where the
    reference raises too, or where the reference computing in `dtype` cannot hold the problem
    (given `parameters`); each such call is counted in the test's tally. `hint` ends the message
    of a port that raised where the reference returns. Where the call exercises a `capability`
    (capabilities.py) and the library refuses it, the test is skipped with that reason, or
    fails where the test module's SPEC requires it."""
    __tracebackhide__ = True
    before = _snapshot(arguments)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NUMERIC_WARNINGS)
            result = call()
    except Exception as error:
        if not_yet_implemented(error):
            raise  # conftest reports it as XFAIL
        if expected.error is not None:
            _count_refusal(arguments)  # both raise: which exception is each backend's own choice
            return None
        if capability and lacks(capability, error):
            report_absent(capability, what, error)
        shape = tuple(np.shape(to_numpy(expected.result)))
        if 0 in shape:
            # No element to disagree on: raising is as good as an empty result.
            count_call("compared")
            return None
        name = function.__name__
        if parameters is not None and dtype:
            inputs = [to_numpy(argument) for argument in arguments]
            broken = rounding_of(function, inputs, parameters, dtype).broken
            if broken:
                count_call("excused", f"{what} raised {type(error).__name__}, and {broken}")
                return None
        msg = (
            f"{what} raised {type(error).__name__}: {error}\nwhere the NumPy reference returns a "
            f"result of shape {shape}, for {_shapes(function, arguments)}. If such inputs are "
            f"outside what {name} should accept, make the reference refuse them too (raise "
            f"ValueError in _{name}_numpy), or keep the tests away from them with the test's "
            "SPEC: a larger min_dims, or the shapes, sides and values it allows; where only a "
            "low-precision dtype raises (no float16 kernel), leave it out of SPEC's dtypes."
            + (f"\n{hint}" if hint else "")
        )
        raise pytest.fail.Exception(msg) from error
    if capability:
        note_capability(capability)  # it ran: whether its value is right is checked apart
    _assert_unchanged(function, before, arguments, what)
    if expected.error is None:
        return result
    if 0 in np.shape(result):
        count_call("compared")  # an empty result where the reference refuses: an edge case agreed
        return result
    if _has_nan(result):
        _count_refusal(arguments)  # NaN: JAX's refusal (compiled code cannot raise)
        return None
    inputs = [to_numpy(argument) for argument in arguments]
    if parameters is not None and dtype and on_the_edge(function, inputs, parameters, dtype):
        count_call("refused")  # the port may answer where its dtype cannot see the edge
        return None
    refusal = expected.error
    pytest.fail(
        f"{what} returned a result of shape {tuple(np.shape(result))} where the NumPy "
        f"reference raises {type(refusal).__name__}: {refusal} (for "
        f"{_shapes(function, arguments)})"
    )


def _has_nan(result: Any) -> bool:
    """Whether `result` holds a NaN: an array, or a gradient call's mapping of them."""
    if isinstance(result, Mapping):
        return any(_has_nan(value) for value in result.values())
    if isinstance(result, (list, tuple)):
        return any(_has_nan(value) for value in result)
    values = to_numpy(result)
    return values.dtype.kind == "f" and bool(np.isnan(values).any())


def _count_refusal(arguments: Sequence[Any]) -> None:
    """Count a refusal the port shares with the reference: a check of its own for an operand
    without elements or axes (an edge case, where refusing is the spec); otherwise nothing was
    compared."""
    edge = any(0 in np.shape(argument) or not np.shape(argument) for argument in arguments)
    count_call("compared" if edge else "refused")


@quiet
def assert_matches_reference(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """`function` on `target` matches `function` on float64 NumPy copies of the same operands.

    The operands are converted to the target first, so the reference sees exactly the values
    the target sees (rounded to its dtype), computed in float64; see the module docstring for
    the tolerance and for a raising reference.
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    arguments = [target.asarray(value) for value in operands]
    expected = expected_from(function, arguments, parameters)
    what = f"{function.__name__} on {target}"
    backend = BACKENDS[target.backend]
    call = functools.partial(backend.call, backend.runs(function), arguments, parameters)
    actual = run_port(
        call, function, arguments, expected, what, parameters=parameters, dtype=target.dtype
    )
    if expected.error is None and actual is not None:
        inputs = [to_numpy(argument) for argument in arguments]
        room = functools.partial(
            room_for, function, inputs, parameters, expected.result, target.dtype
        )
        compared = functools.partial(
            assert_close_with_room,
            room=functools.cache(room),  # computed once at most, shared by the layouts
            target=target,
            what=what,
            tolerances=tolerances,
        )
        if not compared(actual, expected.result):
            return
        count_call("compared")
        # The same values in the other layouts a model hands a port, against the same result.
        names = argument_names(function, len(arguments))
        for layout in backend.layouts(arguments, names) if backend.layouts else ():
            _assert_matches_in(layout, backend, function, parameters, expected, compared, what)
            note_capability("strided_operands")  # for the report: a layout other than contiguous


def assert_close_with_room(
    actual: Any,
    expected: Any,
    *,
    room: Callable[[], Room],
    target: Target,
    what: str,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> bool:
    """`assert_close` with the room of the computation, which `room` computes only where the
    tolerance alone does not hold every element: it runs the reference some 40 times, and most
    calls need none of it (their report then measures the error against the tolerance, a bound
    on its fraction of the whole allowance). False where the room excuses the call (`excused`:
    the dtype holds no element of it), True where the values were compared."""
    __tracebackhide__ = True
    want = to_numpy(expected)
    check_type_dtype_device(actual, want.shape, target=target, what=what)
    got, tolerance = to_numpy(actual), tolerance_of(target.dtype, tolerances)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        error = np.abs(got - want)
        allowed = tolerance.atol + tolerance.rtol * np.abs(want)
        if np.all((error <= allowed) | (got == want) | (np.isnan(got) & np.isnan(want))):
            fraction = np.nan_to_num(error / allowed, nan=0.0)  # nan: equal infinities, or 0/0
            ulps = in_ulps(error, want, target.dtype, tolerance)
            note_closeness(got.size, float(np.max(fraction, initial=0.0)), ulps)
            return True
    computed = room()
    if excused(computed, what):
        return False
    assert_close(actual, expected, target=target, what=what, tolerances=tolerances, room=computed)
    return True


def _assert_matches_in(
    layout: Layout,
    backend: Backend,
    function: Function,
    parameters: Parameters,
    expected: Expected,
    compared: Callable[[Any, Any], bool],
    what: str,
) -> None:
    """The port on `layout`'s operands returns what `compared` (`assert_close_with_room`, with
    the room of the contiguous call) accepts against the reference's result, as it did on
    contiguous operands; where it raises, or returns another value, the failure names the layout."""
    __tracebackhide__ = True
    arguments = layout.arguments
    before = _snapshot(arguments)
    where = f"the operands laid out as {layout.name}: {layout.described}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NUMERIC_WARNINGS)
            result = backend.call(backend.runs(function), arguments, parameters)
    except Exception as error:
        if not_yet_implemented(error):
            raise
        shape = tuple(np.shape(to_numpy(expected.result)))
        msg = (
            f"{what} raised {type(error).__name__}: {error}\non {where}; on the same values "
            f"contiguous it returns, as the NumPy reference does (a result of shape {shape}). "
            "A model hands a port such operands (x.T, x[..., ::2], x.expand(...)): flatten with "
            "reshape, not view, and hand a kernel that indexes row * n + lane a .contiguous() "
            "tensor."
        )
        raise pytest.fail.Exception(msg) from error
    _assert_unchanged(function, before, arguments, f"{what}, on {where},")
    try:
        compared(result, expected.result)
    except pytest.fail.Exception as failure:
        msg = (
            f"{failure.msg}\nOn {where}; on the same values contiguous it matches: a port that "
            "reads its operands as if contiguous (a kernel indexing row * n + lane without "
            ".contiguous()) reads other elements here."
        )
        raise pytest.fail.Exception(msg) from None


#: PyTorch's messages for an operation it has no meta kernel for.
_NO_META_KERNEL = re.compile(r"Meta kernel|Meta tensors|register_meta|'Meta' backend")


@quiet
def assert_keeps_type_dtype_device(
    function: Function, target: Target, operands: Operands, parameters: Parameters | None = None
) -> None:
    """`function` on `target` returns the target's array type, dtype and device, and the
    reference's shape; values are not compared (on the ``meta`` device there are none).

    On ``meta``, a port that calls an operation PyTorch has no meta kernel for (whose result's
    shape depends on the values: ``bincount``, ``nonzero``, ``unique``) is skipped, with the
    reason: its device is checked where a GPU runs the other tests."""
    __tracebackhide__ = True
    parameters = parameters or {}
    expected = expected_from(function, list(operands), parameters)
    arguments = [target.asarray(value) for value in operands]
    what = f"{function.__name__} on {target}"

    def call() -> Any:
        try:
            return function(*arguments, **parameters)
        except NotImplementedError as error:
            if target.device != "meta" or not _NO_META_KERNEL.search(str(error)):
                raise  # a copy out of a meta tensor (a stray .cpu()) is the mix-up looked for
            reason = str(error).split(". ")[0]
            pytest.skip(f"{what}: no meta kernel ({reason}); its GPU targets check the device")

    actual = run_port(call, function, arguments, expected, what)
    if expected.error is None and actual is not None:
        check_type_dtype_device(actual, np.shape(expected.result), target=target, what=what)
        count_call("compared")
