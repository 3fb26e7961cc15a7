"""cross_entropy: the NumPy reference against the math, then every port against the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from {{ cookiecutter.package_name }} import cross_entropy

import parity
from parity import Target

RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(2, 3))
LABELS = np.array([2, 0])


def benchmark_inputs(
    size: int,
) -> tuple[tuple[NDArray[np.float64] | NDArray[np.int64], ...], dict[str, Any]]:
    """Logits of about `size` elements (up to 1000 classes) and their labels, for
    `scripts/bench.py`."""
    rng = np.random.default_rng(size)
    classes = min(size, 1000)
    rows = max(size // classes, 1)
    return (rng.normal(size=(rows, classes)), rng.integers(0, classes, size=rows)), {}


# --- The NumPy reference against the math ---------------------------------------------------


def test_reference_is_log_classes_for_uniform_logits() -> None:
    labels = np.array([0, 1, 4, 4])
    np.testing.assert_allclose(cross_entropy(np.zeros((4, 5)), labels), np.log(5), rtol=1e-15)


def test_reference_is_the_mean_negative_log_probability() -> None:
    logits, labels = RNG.normal(size=(3, 4)), np.array([0, 3, 1])
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = -np.mean(np.log(probabilities[np.arange(3), labels]))
    np.testing.assert_allclose(cross_entropy(logits, labels), expected, rtol=1e-13)


def test_reference_does_not_overflow() -> None:
    # log softmax([1e4, 0, -1e4])_1 = -1e4 exactly, while exp(1e4) is inf.
    loss = cross_entropy(np.array([[1e4, 0.0, -1e4]]), np.array([1]))
    np.testing.assert_allclose(loss, 1e4, rtol=1e-15)


# --- Every port against the reference -------------------------------------------------------


@pytest.mark.parametrize("target", parity.targets(), ids=str)
@given(data=st.data())
def test_matches_reference(target: Target, data: st.DataObject) -> None:
    logits = data.draw(parity.arrays(target, extremes=True), label="logits")
    labels = data.draw(parity.labels(logits.shape[:-1], logits.shape[-1]), label="labels")
    parity.assert_matches_reference(cross_entropy, target, logits, labels)


@pytest.mark.parametrize("target", parity.targets(), ids=str)
def test_large_logits_do_not_overflow(target: Target) -> None:
    logits = np.array([[1e4, 0.0, -1e4], [-1e3, -1e3, 1e3]])
    parity.assert_matches_reference(cross_entropy, target, logits, LABELS)


@pytest.mark.parametrize("target", parity.targets(devices=["meta"]), ids=str)
def test_stays_on_the_input_device(target: Target) -> None:
    # On the meta device (tensors without data), a tensor made on the default device or a
    # stray .cpu() shows up without a GPU.
    parity.assert_keeps_type_dtype_device(cross_entropy, target, LOGITS, LABELS)


@pytest.mark.parametrize("target", parity.targets(parity.PORTS, ["float64"]), ids=str)
@given(data=st.data())
def test_gradient_matches_reference(target: Target, data: st.DataObject) -> None:
    logits = data.draw(parity.arrays(target, max_side=4), label="logits")
    labels = data.draw(parity.labels(logits.shape[:-1], logits.shape[-1]), label="labels")
    parity.assert_gradient_matches_reference(cross_entropy, target, logits, labels)


@pytest.mark.parametrize("target", parity.targets(parity.PORTS, ["float32"]), ids=str)
def test_compiles_to_one_graph(target: Target) -> None:
    parity.assert_compiled_matches_eager(cross_entropy, target, LOGITS, LABELS)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("target", parity.targets(["torch"], ["float32"]), ids=str)
def test_compiles_with_inductor(target: Target) -> None:
    parity.assert_compiled_matches_eager(cross_entropy, target, LOGITS, LABELS, backend="inductor")


@pytest.mark.parametrize("target", parity.targets(["torch"], ["float64"]), ids=str)
def test_vmap_matches_loop(target: Target) -> None:
    parity.assert_vmap_matches_loop(cross_entropy, target, LOGITS, LABELS)


def test_rejects_unsupported_inputs() -> None:
    parity.assert_rejects_unsupported(cross_entropy, LOGITS, LABELS)
