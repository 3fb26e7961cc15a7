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
from parity import Target

RNG = np.random.default_rng(0)


def benchmark_inputs(size: int) -> tuple[tuple[NDArray[np.float64], ...], dict[str, Any]]:
    """Logits of about `size` elements, rows of up to 1000 classes, for `scripts/bench.py`."""
    classes = min(size, 1000)
    x = np.random.default_rng(size).normal(size=(max(size // classes, 1), classes))
    return (x,), {"axis": -1}


# --- The NumPy reference against the math ---------------------------------------------------


def test_reference_inverts_log() -> None:
    # softmax(log p) = p for any probability vector p.
    p = np.array([0.125, 0.25, 0.625])
    np.testing.assert_allclose(softmax(np.log(p)), p, rtol=1e-15)


def test_reference_is_a_distribution_along_axis() -> None:
    x = RNG.normal(size=(2, 3, 4))
    for axis in range(-3, 3):
        probabilities = softmax(x, axis=axis)
        assert probabilities.min() > 0
        np.testing.assert_allclose(probabilities.sum(axis=axis), 1.0, rtol=1e-14)


def test_reference_ignores_shifts() -> None:
    x = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(softmax(x + 100.0, axis=0), softmax(x, axis=0), rtol=1e-12)


def test_reference_does_not_overflow() -> None:
    # exp(1000) is inf in float64: without subtracting the maximum this would be inf / inf.
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]])
    np.testing.assert_array_equal(softmax(x), [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])


# --- Every port against the reference -------------------------------------------------------


@pytest.mark.parametrize("target", parity.targets(), ids=str)
@given(data=st.data())
def test_matches_reference(target: Target, data: st.DataObject) -> None:
    x = data.draw(parity.arrays(target, extremes=True), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    parity.assert_matches_reference(softmax, target, x, axis=axis)


@pytest.mark.parametrize("target", parity.targets(), ids=str)
def test_large_logits_do_not_overflow(target: Target) -> None:
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]])
    parity.assert_matches_reference(softmax, target, x)
    parity.assert_matches_reference(softmax, target, x, axis=0)


@pytest.mark.parametrize("target", parity.targets(devices=["meta"]), ids=str)
def test_stays_on_the_input_device(target: Target) -> None:
    # On the meta device (tensors without data), a tensor made on the default device or a
    # stray .cpu() shows up without a GPU.
    parity.assert_keeps_type_dtype_device(softmax, target, RNG.normal(size=(2, 3)), axis=0)


@pytest.mark.parametrize("target", parity.targets(parity.PORTS, ["float64"]), ids=str)
@given(data=st.data())
def test_gradient_matches_reference(target: Target, data: st.DataObject) -> None:
    x = data.draw(parity.arrays(target, max_side=4), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    parity.assert_gradient_matches_reference(softmax, target, x, axis=axis)


@pytest.mark.parametrize("target", parity.targets(parity.PORTS, ["float32"]), ids=str)
def test_compiles_to_one_graph(target: Target) -> None:
    parity.assert_compiled_matches_eager(softmax, target, RNG.normal(size=(2, 3)), axis=0)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("target", parity.targets(["torch"], ["float32"]), ids=str)
def test_compiles_with_inductor(target: Target) -> None:
    x = RNG.normal(size=(2, 3))
    parity.assert_compiled_matches_eager(softmax, target, x, axis=0, backend="inductor")


@pytest.mark.parametrize("target", parity.targets(["torch"], ["float64"]), ids=str)
def test_vmap_matches_loop(target: Target) -> None:
    parity.assert_vmap_matches_loop(softmax, target, RNG.normal(size=(2, 3)))


def test_rejects_unsupported_inputs() -> None:
    parity.assert_rejects_unsupported(softmax, RNG.normal(size=(2, 3)))
