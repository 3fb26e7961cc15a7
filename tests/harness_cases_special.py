"""The harness's rules on functions nobody here wrote, as libraries ship them (poles, periods,
signed zeros, 0-d operands): written into a generated repo as tests/test_harness_special_cases.py
beside tests/harness_cases.py (whose docstring says what the test names promise) and run there
by tests/test_harness_rules.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import parity
import torch
from parity import Target


def reciprocal(x: Any) -> Any:
    """1 / x: a pole at 0, where the slope -1/x² is beyond float64 for |x| < 1e-154."""
    if isinstance(x, np.ndarray):
        return np.asarray(1.0 / x)
    return torch.reciprocal(x)


@parity.over(["torch"], ["float64"])
def test_correct_reciprocal_gradient_at_a_pole(target: Target) -> None:
    # 4e-269: every step of 6e-6 crosses the pole, and the exact slope overflows (-inf passes);
    # 1e-20: a slope of -1e40, measured with steps relative to x.
    x = np.array([4e-269, -1e-20, 1e-20, -3.0])
    parity.assert_gradient_matches_reference(reciprocal, target, (x,))


@parity.over(["torch"])
def test_correct_reciprocal_near_float64s_largest_value(target: Target) -> None:
    # Results near 1.8e308: the room of such an element overflows; no warning may escape.
    x = np.array([1e-308, -2.3e-308, 5.6e-309, 0.5])
    parity.assert_matches_reference(reciprocal, target, (x,))


def fmod(x: Any, y: Any) -> Any:
    """x - trunc(x / y) * y, the remainder with the sign of x: a period of |y|."""
    if isinstance(x, np.ndarray):
        return np.asarray(np.fmod(x, y))
    return torch.fmod(x, y)


@parity.over(["torch"], ["float64"])
def test_correct_fmod_gradient_with_a_period_narrower_than_every_step(target: Target) -> None:
    # y = 1e-24: each step of 6e-6 spans 6e18 periods and measures about 0; the slope in x is 1.
    x, y = np.array([0.0, 0.25]), np.array([1e-24, 0.75])
    parity.assert_gradient_matches_reference(fmod, target, (x, y), wrt=[0])


def remainder(x: Any, y: Any) -> Any:
    """x - floor(x / y) * y, the remainder with the sign of y: a period of |y|."""
    if isinstance(x, np.ndarray):
        return np.asarray(np.remainder(x, y))
    return torch.remainder(x, y)


#: Ordinary x with a divisor far below x's spacing: each step spans countless periods, and its
#: differences are aliasing noise (1.2e-76, 2e-294), or exactly 0 where every float near x is a
#: multiple of the divisor (2**-126 at x = 1). The slope in x is 1.
BELOW_THE_SPACING = (np.array([9.0, 6.0, 1.0]), np.array([1.2e-76, 2e-294, 2.0**-126]))


@parity.over(["torch"], ["float64"])
def test_correct_fmod_and_remainder_gradients_with_a_period_below_xs_spacing(target: Target) -> None:
    for function in (fmod, remainder):
        parity.assert_gradient_matches_reference(function, target, BELOW_THE_SPACING, wrt=[0])


def fmod_twice_as_steep(x: Any, y: Any) -> Any:
    """The bug: fmod's slope in x doubled, 2 where it is 1 (its value unchanged)."""
    if isinstance(x, np.ndarray):
        return fmod(x, y)
    return torch.fmod(x, y) + (x - x.detach())


def fmod_divisor_slope_flipped(x: Any, y: Any) -> Any:
    """The bug: fmod's slope in y with its sign flipped, trunc(x / y) where it is -trunc(x / y)."""
    if isinstance(x, np.ndarray):
        return fmod(x, y)
    quotient = torch.div(x, y, rounding_mode="trunc").detach()
    return torch.fmod(x, y) + 2 * quotient * (y - y.detach())


@parity.over(["torch"], ["float64"])
def test_bug_fmod_gradient_doubled_beside_a_period_below_xs_spacing(target: Target) -> None:
    # 9 against 1.2e-76 passes unmeasured; the ordinary elements beside it fail.
    x, y = np.array([9.0, 0.7, -2.5]), np.array([1.2e-76, 0.3, 0.75])
    parity.assert_gradient_matches_reference(fmod_twice_as_steep, target, (x, y))


@parity.over(["torch"], ["float64"])
def test_bug_fmod_divisor_gradient_with_its_sign_flipped(target: Target) -> None:
    x, y = np.array([0.7, -2.5, 9.0]), np.array([0.3, 0.75, -1.3])
    parity.assert_gradient_matches_reference(fmod_divisor_slope_flipped, target, (x, y), wrt=[1])


def angle(x: Any) -> Any:
    """The argument of a real number: 0 for x >= 0, pi for x < 0."""
    if isinstance(x, np.ndarray):
        return np.asarray(np.angle(x))
    return torch.angle(x)


@parity.over(["torch"])
def test_correct_angle_at_a_signed_zero(target: Target) -> None:
    # In float16, -1e-9 rounds to -0.0: NumPy's angle of -0.0 is pi, PyTorch's 0. Either side
    # of a jump within the dtype's rounding is a faithful answer.
    x = np.array([-1e-9, -0.0, 0.0, 0.5, -2.0])
    parity.assert_matches_reference(angle, target, (x,))


def sine(x: Any) -> Any:
    """sin x, the reference a plain ufunc: a NumPy scalar for a 0-d x."""
    if isinstance(x, np.ndarray):
        return np.sin(x)
    return torch.sin(x)


@parity.over(["torch"], ["float64"])
def test_correct_sine_of_a_0d_operand(target: Target) -> None:
    parity.assert_matches_reference(sine, target, (np.array(0.5),))
    parity.assert_gradient_matches_reference(sine, target, (np.array(0.5),))


def entropy_term(x: Any) -> Any:
    """-x log x (0 at 0, -inf below): both differences at 0 are infinite."""
    if isinstance(x, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, -np.inf)))
    return torch.special.entr(x)


@parity.over(["torch"], ["float64"])
def test_correct_entropy_term_gradient_at_0(target: Target) -> None:
    parity.assert_gradient_matches_reference(entropy_term, target, (np.array([0.0, 0.5]),))


def tangent_in_float64(x: Any) -> Any:
    """tan x, the reference computing in float64 whatever it is given (as SciPy's functions do)."""
    if isinstance(x, np.ndarray):
        return np.tan(x.astype(np.float64))
    return torch.tan(x)


@parity.over(["torch"], ["float64"])
def test_correct_tangent_gradient_beside_a_pole_inside_every_step(target: Target) -> None:
    # float64's nearest pi/2 lies 6e-17 from the pole, closer than its spacing (2.2e-16): every
    # step crosses it, and the reference has no long double run. The element passes unmeasured,
    # and -v says so; 0.5 is measured.
    x = np.array([np.pi / 2, 0.5])
    parity.assert_gradient_matches_reference(tangent_in_float64, target, (x,))


def sine_less_exact(x: Any) -> Any:
    """The bug: a library as exact as PyTorch's special functions (1e-9 relative)."""
    if isinstance(x, np.ndarray):
        return np.sin(x)
    return torch.sin(x) * (1 + 1e-9)


@parity.over(["torch"], ["float64"])
def test_bug_sine_as_exact_as_a_library_says_which_tolerance_accepts_it(target: Target) -> None:
    parity.assert_matches_reference(sine_less_exact, target, (np.array([0.5, 1.0, 2.0]),))


def swish_sigmoid_in_float32(x: Any) -> Any:
    """The bug: swish, x * sigmoid(x), with its sigmoid computed in float32 (a .float() left in)."""
    if isinstance(x, np.ndarray):
        return np.asarray(x / (1 + np.exp(-x)))
    return x * torch.sigmoid(x.float()).to(x.dtype)


@parity.over(["torch"], ["float64"])
def test_bug_swish_with_its_sigmoid_in_float32_is_named_a_downcast(target: Target) -> None:
    # Off by float32's rounding (2.6e-8 relative): a tolerance that passed it would hide the bug.
    parity.assert_matches_reference(swish_sigmoid_in_float32, target, (np.linspace(-4.0, 4.0, 9),))


LN2 = float(np.log(2.0))


def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x > 0, in Maechler's two branches: a pole at 0 (slope 1/x there)."""
    if isinstance(x, np.ndarray):
        return np.where(x < LN2, np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
    far = torch.maximum(x, torch.tensor(LN2, dtype=x.dtype))  # the branch not taken stays finite
    return torch.where(x < LN2, torch.log(-torch.expm1(-x)), torch.log1p(-torch.exp(-far)))


def log1mexp_unclamped(x: Any) -> Any:
    """The bug: log1p(-exp(-x)) is -inf at x = 1e-20, so torch.where sends 0 * inf = NaN back."""
    if isinstance(x, np.ndarray):
        return log1mexp(x)
    return torch.where(x < LN2, torch.log(-torch.expm1(-x)), torch.log1p(-torch.exp(-x)))


#: Beside the pole, every default step reaches x < 0, where the reference is NaN: only the finer
#: steps measure the slope (1e20 at 1e-20; 1e300 at 1e-300).
BESIDE_THE_POLE = np.array([1e-300, 1e-20, 0.3, 5.0])


@parity.over(["torch"], ["float64"])
def test_correct_log1mexp_gradient_beside_its_pole(target: Target) -> None:
    parity.assert_gradient_matches_reference(log1mexp, target, (BESIDE_THE_POLE,))


@parity.over(["torch"], ["float64"])
def test_bug_log1mexp_gradient_nan_beside_its_pole(target: Target) -> None:
    parity.assert_gradient_matches_reference(log1mexp_unclamped, target, (BESIDE_THE_POLE,))


def square_of_root(x: Any) -> Any:
    """(√x)² = x on x >= 0: the chain rule gives 2√x / (2√x) = 0 / 0 at 0, as libraries' special
    functions give NaN on the end of their domain (gammainc(1, x) at x = 0)."""
    if isinstance(x, np.ndarray):
        return np.asarray(np.sqrt(x) ** 2)
    return torch.sqrt(x) ** 2


@parity.over(["torch"], ["float64"])
def test_correct_nan_gradient_on_the_end_of_the_domain(target: Target) -> None:
    # Only the right side of 0 has a slope, at every step: 0 passes unmeasured, and -v says so.
    parity.assert_gradient_matches_reference(square_of_root, target, (np.array([0.0, 0.5]),))
