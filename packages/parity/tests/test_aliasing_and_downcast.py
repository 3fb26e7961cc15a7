"""Two rules of the harness called directly (no generated repo): a gradient where the function's
features are finer than every finite-difference step passes unmeasured, while wrong gradients
at ordinary inputs still fail; and an error of a narrower dtype's rounding in a wider dtype's
value test is named a likely downcast, with no tolerance proposed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import parity
from parity import Target
from parity.core import TALLY
from parity.gradients import ALIASED, Differences

FLOAT64 = Target("torch", "float64")
#: Ordinary x, a divisor far below x's spacing (the third a power of two: exactly 0 near x).
X, Y = np.array([9.0, 6.0, 1.0]), np.array([1.2e-76, 2e-294, 2.0**-126])


def fmod(x: Any, y: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.asarray(np.fmod(x, y))
    return torch.fmod(x, y)


def remainder(x: Any, y: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.asarray(np.remainder(x, y))
    return torch.remainder(x, y)


def fmod_twice_as_steep(x: Any, y: Any) -> Any:
    """The bug: a slope of 2 in x, where it is 1."""
    if isinstance(x, np.ndarray):
        return fmod(x, y)
    return torch.fmod(x, y) + (x - x.detach())


def fmod_divisor_slope_flipped(x: Any, y: Any) -> Any:
    """The bug: the slope in y with its sign flipped."""
    if isinstance(x, np.ndarray):
        return fmod(x, y)
    return torch.fmod(x, y) + 2 * torch.div(x, y, rounding_mode="trunc").detach() * (y - y.detach())


def round_straight_through(x: Any, scale: Any) -> Any:
    """The bug: x rounded to a multiple of `scale`, with a straight-through slope of 1 in x."""
    if isinstance(x, np.ndarray):
        return np.asarray(np.round(x / scale) * scale)
    return x + (torch.round(x / scale) * scale - x).detach()


@pytest.fixture(autouse=True)
def _fresh_tally() -> None:
    TALLY.unmeasured.clear()


@pytest.mark.parametrize("function", [fmod, remainder])
def test_a_period_below_xs_spacing_passes_unmeasured(function: Any) -> None:
    parity.assert_gradient_matches_reference(function, FLOAT64, (X, Y), wrt=[0])
    assert TALLY.unmeasured[f"{ALIASED} (x)"] >= 1, TALLY.unmeasured


@pytest.mark.parametrize("index", range(3))
def test_each_divisor_below_xs_spacing_is_found_aliased(index: int) -> None:
    # Whatever rule passes them first, the new one holds at all three elements.
    weights = np.array([0.3616, -0.5357, 0.6404])

    def terms(operands: list[Any]) -> Any:
        return weights * np.fmod(operands[0], operands[1])

    differences = Differences.of(terms, [X, Y], 0, np.zeros(3))
    assert differences.aliased((index,), float(weights[index]))


def test_a_doubled_slope_fails_at_ordinary_inputs_beside_an_aliased_element() -> None:
    x, y = np.array([9.0, 0.7, -2.5]), np.array([1.2e-76, 0.3, 0.75])
    with pytest.raises(pytest.fail.Exception, match="for x on torch-float64-cpu differs"):
        parity.assert_gradient_matches_reference(fmod_twice_as_steep, FLOAT64, (x, y))


def test_a_flipped_divisor_slope_fails_at_ordinary_inputs() -> None:
    x, y = np.array([0.7, -2.5, 9.0]), np.array([0.3, 0.75, -1.3])
    with pytest.raises(pytest.fail.Exception, match="for y on torch-float64-cpu differs"):
        parity.assert_gradient_matches_reference(
            fmod_divisor_slope_flipped, FLOAT64, (x, y), wrt=[1]
        )


def test_a_straight_through_slope_of_a_flat_function_still_fails() -> None:
    # Flat at every float near x, with another operand to move: no period appears there.
    x, scale = np.array([5.2, -0.3, 0.2]), np.array([1.0, 0.25, 1.0])
    with pytest.raises(pytest.fail.Exception, match="for x on torch-float64-cpu differs"):
        parity.assert_gradient_matches_reference(
            round_straight_through, FLOAT64, (x, scale), wrt=[0]
        )


def swish_sigmoid_in_float32(x: Any) -> Any:
    """The bug: swish with its sigmoid computed in float32."""
    if isinstance(x, np.ndarray):
        return np.asarray(x / (1 + np.exp(-x)))
    return x * torch.sigmoid(x.float()).to(x.dtype)


def sine_less_exact(x: Any) -> Any:
    """A library 1e-9 relative off in float64: its accuracy, not a downcast."""
    if isinstance(x, np.ndarray):
        return np.sin(x)
    return torch.sin(x) * (1 + 1e-9)


def test_a_float32_error_in_a_float64_test_is_named_a_downcast_without_a_tolerance() -> None:
    with pytest.raises(pytest.fail.Exception) as failure:
        parity.assert_matches_reference(swish_sigmoid_in_float32, FLOAT64, (np.linspace(-4, 4, 9),))
    message = str(failure.value)
    assert "about float32's (eps 1.2e-07) rounding in a float64 test" in message, message
    assert "Tolerance(" not in message, message
    assert "TOLERANCES" not in message, message


def test_a_float16_error_in_a_float32_test_is_named_a_downcast() -> None:
    def exp_in_float16(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return np.exp(x)
        return torch.exp(x.half()).to(x.dtype)

    with pytest.raises(pytest.fail.Exception) as failure:
        parity.assert_matches_reference(
            exp_in_float16, Target("torch", "float32"), (np.linspace(-2, 2, 9),)
        )
    assert "float16's (eps 0.00098)" in str(failure.value), str(failure.value)
    assert "Tolerance(" not in str(failure.value)


def test_a_librarys_accuracy_still_gets_the_tolerance_that_accepts_it() -> None:
    with pytest.raises(pytest.fail.Exception) as failure:
        parity.assert_matches_reference(sine_less_exact, FLOAT64, (np.array([0.5, 1.0, 2.0]),))
    message = str(failure.value)
    assert "{'float64': Tolerance(rtol=4e-09, atol=1e-12)}" in message, message
    assert "downcast" not in message
