"""cross_entropy: the NumPy reference against the math, then every port against the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from {{ cookiecutter.package_name }} import cross_entropy

import parity
from parity import Target, Tolerance

# --- What the tests draw ----------------------------------------------------------------------

#: What cross_entropy takes, declared once for every helper below (`parity.Spec` says more):
#: logits (..., C) and integer labels (...) from 0 up to, not including, C.
SPEC = parity.Spec(shapes={"logits": "...c", "labels": "..."}, integers={"labels": (0, "c")})
#: A result matches where |result - reference| <= atol + rtol * |reference| + the room that the
#: reference's own sensitivity and rounding give (see `parity`). rtol and atol per dtype, here
#: overriding `parity.TOLERANCES`, e.g. {"bfloat16": Tolerance(rtol=0.05, atol=0.01)}.
TOLERANCES: dict[str, Tolerance] = {}
#: Operands (float64 logits, int64 labels, as NumPy arrays) and parameters of one call.
Call = tuple[tuple[NDArray[Any], ...], dict[str, Any]]


def draw(data: st.DataObject, target: Target, *, extremes: bool = False, max_side: int = 5) -> Call:
    """Logits and labels as `SPEC` allows."""
    drawn = parity.operands(target, SPEC, max_side=max_side, extremes=extremes)
    return data.draw(drawn, label="operands"), {}


def benchmark_inputs(size: int) -> Call:
    """One call with about `size` logits (for benchmarks/), as `SPEC` allows."""
    return parity.sized_operands(SPEC, size), {}


def benchmark_flops(size: int) -> int:
    """Its operations (for the roofline): log_softmax's, then a mean's sum per row."""
    (logits, labels), _ = benchmark_inputs(size)
    return 5 * logits.size + 2 * labels.size


LOGITS = np.random.default_rng(0).normal(size=(2, 3))
LABELS = np.array([2, 0])

# --- The NumPy reference against the math ---------------------------------------------------


def test_reference_is_log_classes_for_uniform_logits() -> None:
    labels = np.array([0, 1, 4, 4])
    np.testing.assert_allclose(cross_entropy(np.zeros((4, 5)), labels), np.log(5), rtol=1e-15)


def test_reference_is_the_mean_negative_log_probability() -> None:
    logits, labels = np.random.default_rng(1).normal(size=(3, 4)), np.array([0, 3, 1])
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = -np.mean(np.log(probabilities[np.arange(3), labels]))
    np.testing.assert_allclose(cross_entropy(logits, labels), expected, rtol=1e-13)


def test_reference_does_not_overflow() -> None:
    # log softmax([1e4, 0, -1e4])_1 = -1e4 exactly, while exp(1e4) is inf.
    loss = cross_entropy(np.array([[1e4, 0.0, -1e4]]), np.array([1]))
    np.testing.assert_allclose(loss, 1e4, rtol=1e-15)


def test_reference_returns_a_0d_array() -> None:
    loss = cross_entropy(LOGITS, LABELS)
    assert isinstance(loss, np.ndarray)
    assert loss.shape == ()


@pytest.mark.parametrize("label", [-1, 3])
def test_labels_outside_the_classes_are_refused(label: int) -> None:
    # NumPy would wrap -1 around to the last class; PyTorch's gather refuses it.
    labels = np.array([label, 0])
    with pytest.raises(ValueError, match=r"labels outside \[0, 3\)"):
        cross_entropy(LOGITS, labels)
    with pytest.raises(RuntimeError, match="out of bounds"):
        cross_entropy(torch.from_numpy(LOGITS), torch.from_numpy(labels))


# --- Every port against the reference -------------------------------------------------------


@parity.over()
@given(data=st.data())
def test_matches_reference(target: Target, data: st.DataObject) -> None:
    operands, parameters = draw(data, target, extremes=True)
    parity.assert_matches_reference(
        cross_entropy, target, operands, parameters, tolerances=TOLERANCES
    )


@parity.over()
def test_large_logits_do_not_overflow(target: Target) -> None:
    logits = np.array([[1e4, 0.0, -1e4], [-1e3, -1e3, 1e3]])
    parity.assert_matches_reference(cross_entropy, target, (logits, LABELS))


@parity.over()
@pytest.mark.parametrize("case", ["smallest", "empty"])
def test_edge_shapes(target: Target, case: str) -> None:
    # "smallest": one row of one class and a 0-d label; "empty": no classes at all, which the
    # reference refuses (a maximum of nothing), and so must every port.
    parity.assert_matches_reference(cross_entropy, target, parity.edge_operands(SPEC, case))


@parity.over(devices=["meta"])
def test_stays_on_the_input_device(target: Target) -> None:
    # On the meta device (tensors without data), a tensor made on the default device or a
    # stray .cpu() shows up without a GPU.
    parity.assert_keeps_type_dtype_device(cross_entropy, target, (LOGITS, LABELS))


@parity.over(parity.PORTS, ["float64"])
@given(data=st.data())
def test_gradient_matches_reference(target: Target, data: st.DataObject) -> None:
    # Moderate values in every example, compared; extreme ones too in about half, where only a
    # NaN or infinite gradient fails.
    operands, parameters = draw(data, target, max_side=4)
    parity.assert_gradient_matches_reference(cross_entropy, target, operands, parameters)
    if data.draw(st.booleans(), label="extremes"):
        operands, parameters = draw(data, target, extremes=True, max_side=4)
        parity.assert_gradient_matches_reference(
            cross_entropy, target, operands, parameters, compare_values=False
        )


@parity.over(parity.PORTS, ["float64"])
def test_second_derivative_matches(target: Target) -> None:
    # Differentiated twice: against differences of the port's own (checked) gradient.
    parity.assert_second_derivative_matches(cross_entropy, target, (LOGITS, LABELS))


@parity.over(parity.PORTS, ["float64"])
def test_forward_mode_matches_reverse(target: Target) -> None:
    parity.assert_forward_mode_matches(cross_entropy, target, (LOGITS, LABELS))


@parity.over(parity.PORTS, ["float32"])
def test_compiles_to_one_graph(target: Target) -> None:
    parity.assert_compiled_matches_eager(cross_entropy, target, (LOGITS, LABELS))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@parity.over(["torch"], ["float32"])
def test_compiles_with_inductor(target: Target) -> None:
    operands = (LOGITS, LABELS)
    parity.assert_compiled_matches_eager(cross_entropy, target, operands, compiler="inductor")


@parity.over(["torch"], ["float64"])
def test_vmap_matches_loop(target: Target) -> None:
    parity.assert_vmap_matches_loop(cross_entropy, target, (LOGITS, LABELS), spec=SPEC)


def test_rejects_unsupported_inputs() -> None:
    parity.assert_rejects_unsupported(cross_entropy, (LOGITS, LABELS))
