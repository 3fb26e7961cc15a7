"""Compiled and batched code against eager code."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

from .backends import BACKENDS, to_numpy
from .core import Function, Operands, Parameters, Tolerance, count_call, quiet
from .room import Room, room_for
from .spec import Spec
from .targets import Target
from .values import Expected, assert_close_with_room, expected_from, run_port


def _close_to(
    function: Function,
    target: Target,
    arguments: Sequence[Any],
    parameters: Parameters,
    *,
    batched: Sequence[bool] | None = None,
) -> tuple[Expected, Callable[[Any, Any, str, Mapping[str, Tolerance] | None], bool]]:
    """The reference's outcome for `arguments`, and a check that a result of the target is
    within the room of that computation of an eager one (per slice of the batch, if `batched`),
    which returns False where the dtype holds no element of the call (excused, not compared)."""
    __tracebackhide__ = True
    if batched is None:
        expected = expected_from(function, arguments, parameters)
        results = [] if expected.error else [expected.result]
        slices = [arguments]
    else:
        slices = [
            [
                value[i] if mapped else value
                for value, mapped in zip(arguments, batched, strict=True)
            ]
            for i in range(len(next(a for a, m in zip(arguments, batched, strict=True) if m)))
        ]
        outcomes = [expected_from(function, one, parameters) for one in slices]
        expected = next((outcome for outcome in outcomes if outcome.error), Expected(0.0))
        results = [outcome.result for outcome in outcomes] if expected.error is None else []

    def room() -> Room:
        rooms = [
            room_for(function, [to_numpy(a) for a in one], parameters, result, target.dtype)
            for one, result in zip(slices, results, strict=False)
        ]
        if batched is None:
            return rooms[0]
        return Room(  # each slice's room, stacked along the mapped axis
            np.stack([np.asarray(r.room) for r in rooms]),
            np.stack([np.asarray(r.lost) for r in rooms]),
            next((r.broken for r in rooms if r.broken), ""),
        )

    def check(
        actual: Any, eager: Any, what: str, tolerances: Mapping[str, Tolerance] | None
    ) -> bool:
        __tracebackhide__ = True
        return assert_close_with_room(
            actual, eager, room=room, target=target, what=what, tolerances=tolerances
        )

    return expected, check


@quiet
def assert_compiled_matches_eager(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    compiler: str = "aot_eager",
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """`function` compiled as one whole graph gives the eager result (within the room of the
    computation, as `assert_matches_reference` allows), and is compiled once for two calls with
    different values of the same shapes and dtypes.

    PyTorch: ``torch.compile(fullgraph=True)``, so any graph break is an error. The default
    `compiler`, ``aot_eager``, traces the forward and backward graphs as inductor would but
    skips code generation (a second instead of half a minute on a CPU); pass
    ``compiler="inductor"`` for the real thing. Other backends compile their own way (their
    ``compile`` in `BACKENDS`). A graph break is a capability the port lacks, not a wrong value:
    the test is skipped with torch's reason unless the SPEC requires ``"one_graph"``.
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    compile_ = BACKENDS[target.backend].compile
    if compile_ is None:
        pytest.fail(f"no compiler for {target.backend}")
    calls = [
        [target.asarray(value) for value in operands],
        [target.asarray(_other_values(value)) for value in operands],
    ]
    runs = BACKENDS[target.backend].runs(function)
    compiled, count, how = compile_(functools.partial(runs, **parameters), compiler)
    name = f"{how} of {function.__name__} on {target}"
    compared = False
    for arguments in calls:
        expected, check = _close_to(function, target, arguments, parameters)
        what = f"{function.__name__} on {target}"
        eager = functools.partial(runs, *arguments, **parameters)
        eager_result = run_port(
            eager, function, arguments, expected, what, parameters=parameters, dtype=target.dtype
        )
        result = run_port(
            functools.partial(compiled, *arguments),
            function,
            arguments,
            expected,
            name,
            parameters=parameters,
            dtype=target.dtype,
            capability="one_graph",
        )
        if expected.error is None and result is not None and eager_result is not None:
            compared = check(result, eager_result, name, tolerances) or compared
    if count() > 1:
        pytest.fail(
            f"{name} compiled {count()} times for two calls with the same shapes and dtypes: a "
            "guard failed on the second call (a changing Python value, .item(), a branch on data?)"
        )
    if compared:
        count_call("compared")


def _other_values(value: NDArray[Any]) -> NDArray[Any]:
    """New values of the same shape and dtype (integers, e.g. labels, are kept)."""
    return np.asarray(0.5 * value + 0.25) if np.issubdtype(value.dtype, np.floating) else value


@quiet
def assert_vmap_matches_loop(
    function: Function,
    target: Target,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    spec: Spec | None = None,
    tolerances: Mapping[str, Tolerance] | None = None,
) -> None:
    """``torch.func.vmap`` of `function` over the leading axis of the batched operands (those
    with ``...`` in `spec`; every operand without a `spec`) equals `function` applied to each
    slice, stacked, within the room of the computation. Where torch.func refuses the port (a
    classic-style autograd.Function), the test is skipped with that reason unless the SPEC
    requires ``"vmap"``."""
    __tracebackhide__ = True
    parameters = parameters or {}
    arguments = [target.asarray(value) for value in operands]
    batched = spec.batched if spec is not None else (True,) * len(arguments)
    if not any(batched):
        pytest.skip(
            f"{function.__name__}: no operand has batch axes ('...' in its Spec) to map over"
        )
    expected, check = _close_to(function, target, arguments, parameters, batched=batched)
    what = f"torch.func.vmap of {function.__name__} on {target}"

    def loop() -> torch.Tensor:
        size = len(next(a for a, m in zip(arguments, batched, strict=True) if m))
        return torch.stack(
            [
                function(
                    *[a[i] if m else a for a, m in zip(arguments, batched, strict=True)],
                    **parameters,
                )
                for i in range(size)
            ]
        )

    eager = f"{function.__name__} on {target}"
    looped = run_port(
        loop, function, arguments, expected, eager, parameters=parameters, dtype=target.dtype
    )
    in_dims = tuple(0 if mapped else None for mapped in batched)
    mapped = torch.func.vmap(functools.partial(function, **parameters), in_dims=in_dims)
    result = run_port(
        lambda: mapped(*arguments),
        function,
        arguments,
        expected,
        what,
        parameters=parameters,
        dtype=target.dtype,
        capability="vmap",
    )
    comparable = expected.error is None and result is not None and looped is not None
    if comparable and check(result, looped, what, tolerances):
        count_call("compared")
