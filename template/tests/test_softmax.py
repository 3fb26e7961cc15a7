"""softmax: the NumPy reference against the math, then every port against the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from {{ cookiecutter.package_name }} import softmax

import parity
from parity import Target, Tolerance

# --- What the tests draw ----------------------------------------------------------------------

#: What softmax takes, declared once for every helper below (`parity.Spec` says more): x of any
#: shape with at least one axis, values from -10 to 10 (and extremes, where a test asks).
SPEC = parity.Spec(shapes={"x": "..."}, min_dims=1)
#: A result matches where |result - reference| <= atol + rtol * |reference| + the room that the
#: reference's own sensitivity and rounding give (see `parity`). rtol and atol per dtype, here
#: overriding `parity.TOLERANCES`, e.g. {"bfloat16": Tolerance(rtol=0.05, atol=0.01)}.
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
    """Its operations (for the roofline): max, subtract, exp, sum, divide, per element."""
    (x,), _ = benchmark_inputs(size)
    return 5 * x.size


X = np.random.default_rng(0).normal(size=(2, 3))
#: Where softmax runs: NumPy (the reference), then its ports.
BACKENDS = [*parity.DEFAULT{{ ', "triton"' if cookiecutter.triton }}]

# --- The NumPy reference against the math ---------------------------------------------------


def test_reference_inverts_log() -> None:
    # softmax(log p) = p for any probability vector p.
    p = np.array([0.125, 0.25, 0.625])
    np.testing.assert_allclose(softmax(np.log(p)), p, rtol=1e-15)


def test_reference_is_a_distribution_along_axis() -> None:
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    for axis in range(-3, 3):
        probabilities = softmax(x, axis=axis)
        assert probabilities.min() > 0
        np.testing.assert_allclose(probabilities.sum(axis=axis), 1.0, rtol=1e-14)


def test_reference_ignores_shifts() -> None:
    x = np.random.default_rng(2).normal(size=(3, 4))
    np.testing.assert_allclose(softmax(x + 100.0, axis=0), softmax(x, axis=0), rtol=1e-12)


def test_reference_does_not_overflow() -> None:
    # exp(1000) is inf in float64: without subtracting the maximum this would be inf / inf.
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]])
    np.testing.assert_array_equal(softmax(x), [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])


def test_reference_returns_arrays() -> None:
    result = softmax(np.array([3.0]))
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, [1.0])


# --- Every port against the reference -------------------------------------------------------


@parity.over(BACKENDS)
@given(data=st.data())
def test_matches_reference(target: Target, data: st.DataObject) -> None:
    operands, parameters = draw(data, target, extremes=True)
    parity.assert_matches_reference(softmax, target, operands, parameters, tolerances=TOLERANCES)


@parity.over(BACKENDS)
def test_large_logits_do_not_overflow(target: Target) -> None:
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]])
    parity.assert_matches_reference(softmax, target, (x,))
    parity.assert_matches_reference(softmax, target, (x,), {"axis": 0})


@parity.over(BACKENDS)
@pytest.mark.parametrize("case", ["smallest", "empty", "0-d"])
def test_edge_shapes(target: Target, case: str) -> None:
    # Where the reference raises (an empty reduction, a 0-d x), every port raises too.
    operands = (np.ones(()),) if case == "0-d" else parity.edge_operands(SPEC, case)
    parity.assert_matches_reference(softmax, target, operands)


@parity.over(devices=["meta"])
def test_stays_on_the_input_device(target: Target) -> None:
    # On the meta device (tensors without data), a tensor made on the default device or a
    # stray .cpu() shows up without a GPU.
    parity.assert_keeps_type_dtype_device(softmax, target, (X,), {"axis": 0})


@parity.over(BACKENDS[1:], ["float64"])
@given(data=st.data())
def test_gradient_matches_reference(target: Target, data: st.DataObject) -> None:
    # Moderate values in every example, compared; extreme ones too in about half, where only a
    # NaN or infinite gradient fails.
    operands, parameters = draw(data, target, max_side=4)
    parity.assert_gradient_matches_reference(softmax, target, operands, parameters)
    if data.draw(st.booleans(), label="extremes"):
        operands, parameters = draw(data, target, extremes=True, max_side=4)
        parity.assert_gradient_matches_reference(
            softmax, target, operands, parameters, compare_values=False
        )


@parity.over(BACKENDS[1:], ["float64"])
def test_second_derivative_matches(target: Target) -> None:
    # Differentiated twice (a gradient penalty, meta-learning): against differences of the
    # port's own gradient. A port that cannot (a Triton port's backward, a custom operator
    # without a backward of its own) is skipped, quoting PyTorch, unless SPEC's requires= says
    # it must: parity.Spec(..., requires={"second_derivative"}).
    parity.assert_second_derivative_matches(softmax, target, (X,), {"axis": 0})


@parity.over(BACKENDS[1:], ["float64"])
def test_forward_mode_matches_reverse(target: Target) -> None:
    parity.assert_forward_mode_matches(softmax, target, (X,), {"axis": 0})


@parity.over(BACKENDS[1:], ["float32"])
def test_compiles_to_one_graph(target: Target) -> None:
    parity.assert_compiled_matches_eager(softmax, target, (X,), {"axis": 0})


{% if cookiecutter.triton -%}
@parity.over(["triton"], ["float32"])
@pytest.mark.parametrize("width", [1, 7, 1024, 1100])
def test_rows_of_every_width(target: Target, width: int) -> None:
    # The kernels take a row in blocks of up to 1024 lanes: rows of one partial block, of one
    # whole block, and of whole blocks and a partial one.
    x = np.random.default_rng(width).normal(size=(2, width)) * 10
    parity.assert_matches_reference(softmax, target, (x,))
    parity.assert_gradient_matches_reference(softmax, target, (x.astype(np.float64),))


{% endif -%}
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@parity.over(["torch"], ["float32"])
def test_compiles_with_inductor(target: Target) -> None:
    parity.assert_compiled_matches_eager(softmax, target, (X,), {"axis": 0}, compiler="inductor")


@parity.over(["torch"], ["float64"])
def test_vmap_matches_loop(target: Target) -> None:
    parity.assert_vmap_matches_loop(softmax, target, (X,), spec=SPEC)


def test_rejects_unsupported_inputs() -> None:
    parity.assert_rejects_unsupported(softmax, (X,))
