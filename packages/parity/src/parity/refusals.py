"""Refused inputs: a clear `TypeError` for what no backend accepts."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

import pytest
from numpy.typing import NDArray

from .backends import BACKENDS, DEFAULT
from .core import Function, Operands, Parameters, not_yet_implemented, with_replaced
from .targets import Target, missing_backend


class ArrayLike:
    """Converts to an array with ``numpy.asarray`` but is not one, like a pandas object."""

    def __init__(self, values: NDArray[Any]) -> None:
        self.values = values

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        return self.values if dtype is None else self.values.astype(dtype)


def assert_rejects_unsupported(
    function: Function,
    operands: Operands,
    parameters: Parameters | None = None,
    *,
    backends: Sequence[str] = DEFAULT,
) -> None:
    """`function` raises a ``TypeError`` that names the problem and what to pass instead:

    - for each operand replaced by a list, a Python float or an `ArrayLike`;
    - for each floating operand replaced by integers, on every backend the function has (each
      would promote them differently, so the package refuses them);
    - for each operand of integers (class labels, indices: `Spec.integers`) replaced by floats,
      on every backend, naming the operand and asking for integers (or refused by the library
      itself, any exception, where the dispatch does not check that operand);
    - with several operands, for operands from two such backends (naming both).

    `backends`: those the function takes (`ARRAY_API` for a shared implementation).
    """
    __tracebackhide__ = True
    parameters = parameters or {}
    name = function.__name__
    available = [
        backend
        for backend in backends
        if backend in BACKENDS
        and BACKENDS[backend].arrays is None  # another backend's arrays: no new refusal
        and missing_backend(backend) is None
    ]
    for position, value in enumerate(operands):
        wrong_values = [(value.tolist(), "list"), (1.0, "float"), (ArrayLike(value), "ArrayLike")]
        for wrong, type_name in wrong_values:
            arguments = with_replaced(operands, [position], [wrong])
            with pytest.raises(TypeError, match=rf"{name}\(\) got .*{type_name}.*; expected numpy"):
                function(*arguments, **parameters)
        if value.dtype.kind not in "fiu":
            continue
        integers = value.dtype.kind != "f"
        wrong = value.astype(float if integers else int)
        expected = rf"{name}\(\) got .*float.*; expected integers" if integers else None
        for backend in available:
            make = Target(backend, "float64").asarray
            arguments = [make(item) for item in with_replaced(operands, [position], [wrong])]
            # Floats as indices: any refusal, as the library's own (a module written before its
            # dispatch checked integer operands raises IndexError from NumPy, and it refuses).
            with pytest.raises(Exception if integers else TypeError) as raised:
                function(*arguments, **parameters)
            # A backend without a branch yet says so instead; its parity tests report it (XFAIL).
            if isinstance(raised.value, TypeError) and not not_yet_implemented(raised.value):
                raised.match(expected or rf"{name}\(\) got .*int.*; expected floating")
    for first, rest in itertools.permutations(available, 2) if len(operands) > 1 else []:
        arguments = [Target(first, "float64").asarray(operands[0])]
        arguments += [Target(rest, "float64").asarray(value) for value in operands[1:]]
        with pytest.raises(TypeError, match=re.escape("different backends")) as raised:
            function(*arguments, **parameters)
        for backend in (first, rest):
            assert backend in str(raised.value), f"{raised.value} does not name {backend}"
