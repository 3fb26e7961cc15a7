"""log_softmax: the NumPy reference against the math, then its one shared implementation (Array
API) against the reference, on every array library here (`parity.ARRAY_API`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from {{ cookiecutter.package_name }} import log_softmax, softmax

import parity
from parity import Target, Tolerance

# --- What the tests draw ----------------------------------------------------------------------

#: What log_softmax takes, declared once for every helper below (`parity.Spec` says more): x of any
#: shape with at least one axis, values from -10 to 10 (and extremes, where a test asks).
SPEC = parity.Spec(shapes={"x": "..."}, min_dims=1)
#: Per-dtype rtol and atol overriding `parity.TOLERANCES` (see test_softmax.py).
TOLERANCES: dict[str, Tolerance] = {}
#: Operands (float64 NumPy arrays) and parameters of one call.
Call = tuple[tuple[NDArray[np.float64], ...], dict[str, Any]]


def draw(data: st.DataObject, target: Target, *, extremes: bool = False, max_side: int = 5) -> Call:
    """x as `SPEC` allows, and an axis of x."""
    drawn = parity.operands(target, SPEC, max_side=max_side, extremes=extremes)
    (x,) = data.draw(drawn, label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    return (x,), {"axis": axis}


def benchmark_inputs(size: int) -> Call:
    """One call with about `size` elements (for benchmarks/), as `SPEC` allows."""
    return parity.sized_operands(SPEC, size), {"axis": -1}


def benchmark_flops(size: int) -> int:
    """Its operations (for the roofline): max, subtract, exp, sum, subtract; a log per row."""
    (x,), _ = benchmark_inputs(size)
    return 5 * x.size + x.size // x.shape[-1]


X = np.random.default_rng(0).normal(size=(2, 3))

# --- The NumPy reference against the math ---------------------------------------------------


def test_reference_is_the_log_of_softmax() -> None:
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    for axis in range(-3, 3):
        np.testing.assert_allclose(
            log_softmax(x, axis=axis), np.log(softmax(x, axis=axis)), rtol=1e-13
        )


def test_reference_is_a_log_distribution() -> None:
    x = np.random.default_rng(2).normal(size=(3, 4))
    np.testing.assert_allclose(np.exp(log_softmax(x, axis=0)).sum(axis=0), 1.0, rtol=1e-14)


def test_reference_does_not_overflow_or_underflow() -> None:
    # log(softmax(x)) is log(0) = -inf for the last two entries; log_softmax stays finite.
    x = np.array([1000.0, 1000.0, -1000.0])
    expected = [-np.log(2.0), -np.log(2.0), -2000.0 - np.log(2.0)]
    np.testing.assert_allclose(log_softmax(x), expected, rtol=1e-15)


# --- The shared implementation against the reference ------------------------------------------


@parity.over(parity.ARRAY_API)
@given(data=st.data())
def test_matches_reference(target: Target, data: st.DataObject) -> None:
    operands, parameters = draw(data, target, extremes=True)
    parity.assert_matches_reference(
        log_softmax, target, operands, parameters, tolerances=TOLERANCES
    )


@parity.over(parity.ARRAY_API)
def test_large_values_do_not_overflow(target: Target) -> None:
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]])
    parity.assert_matches_reference(log_softmax, target, (x,))
    parity.assert_matches_reference(log_softmax, target, (x,), {"axis": 0})


@parity.over(parity.ARRAY_API, ["float64"])
@pytest.mark.parametrize("case", ["smallest", "empty", "0-d"])
def test_edge_shapes(target: Target, case: str) -> None:
    # Where the reference raises (an empty reduction, a 0-d x), every library raises too; the
    # shapes are the same code in every dtype.
    operands = (np.ones(()),) if case == "0-d" else parity.edge_operands(SPEC, case)
    parity.assert_matches_reference(log_softmax, target, operands)


@parity.over(["torch"], devices=["meta"])
def test_stays_on_the_input_device(target: Target) -> None:
    parity.assert_keeps_type_dtype_device(log_softmax, target, (X,), {"axis": 0})


@parity.over(["torch", "jax"], ["float64"])
@given(data=st.data())
def test_gradient_matches_reference(target: Target, data: st.DataObject) -> None:
    # Moderate values in every example, compared; extreme ones too in about half, where only a
    # NaN or infinite gradient fails.
    operands, parameters = draw(data, target, max_side=4)
    parity.assert_gradient_matches_reference(log_softmax, target, operands, parameters)
    if data.draw(st.booleans(), label="extremes"):
        operands, parameters = draw(data, target, extremes=True, max_side=4)
        parity.assert_gradient_matches_reference(
            log_softmax, target, operands, parameters, compare_values=False
        )


@parity.over(["torch", "jax"], ["float64"])
def test_second_derivative_matches(target: Target) -> None:
    # Differentiated twice: against differences of the port's own (checked) gradient.
    parity.assert_second_derivative_matches(log_softmax, target, (X,), {"axis": 0})


@parity.over(["torch", "jax"], ["float64"])
def test_forward_mode_matches_reverse(target: Target) -> None:
    parity.assert_forward_mode_matches(log_softmax, target, (X,), {"axis": 0})


@parity.over(["torch"], ["float32"])
def test_compiles_to_one_graph(target: Target) -> None:
    # JAX's targets above already run through jax.jit (parity.BACKENDS).
    parity.assert_compiled_matches_eager(log_softmax, target, (X,), {"axis": 0})


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@parity.over(["torch"], ["float32"])
def test_compiles_with_inductor(target: Target) -> None:
    parity.assert_compiled_matches_eager(
        log_softmax, target, (X,), {"axis": 0}, compiler="inductor"
    )


@parity.over(["torch"], ["float64"])
def test_vmap_matches_loop(target: Target) -> None:
    parity.assert_vmap_matches_loop(log_softmax, target, (X,), spec=SPEC)


def test_rejects_unsupported_inputs() -> None:
    parity.assert_rejects_unsupported(log_softmax, (X,), backends=parity.ARRAY_API)
