"""The harness's rules on a Spec's values: domains in interval notation, whose holes and open ends
every draw, extreme or ordinary, and every fixed operand honour in every dtype, and the Spec's
checks of what it declares: written into a generated repo as tests/test_harness_domain_cases.py
beside tests/harness_cases.py (whose docstring says what the test names promise) and run there by
tests/test_harness_rules.py.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import parity
import pytest
import torch
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from parity import Target


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


# --- Values with holes and open ends: a Spec's domain in interval notation ----------------------
# Each draw, ordinary or extreme, and each fixed operand stays inside the domain as the target's
# dtype rounds it: never on an excluded end (log of 0), never in a hole (1 / 0).


def one_over(x: Any) -> Any:
    """1 / x, away from its pole at 0."""
    if isinstance(x, np.ndarray):
        return np.asarray(1.0 / x)
    return 1.0 / x


def logarithm(x: Any) -> Any:
    """log x, on (0, inf): -inf at the excluded end 0."""
    if isinstance(x, np.ndarray):
        return np.asarray(np.log(x))
    if isinstance(x, torch.Tensor):
        return torch.log(x)
    return _jnp().log(x)


AWAY_FROM_ZERO = parity.Spec(shapes={"x": "..."}, values={"x": "[-10, -0.5] | [0.5, 10]"})
OPEN_AT_ZERO = parity.Spec(shapes={"x": "..."}, values={"x": "(0, 10]"})


def _as_the_target_sees(target: Target, x: np.ndarray) -> np.ndarray:
    """`x` rounded to the target's dtype, as the harness converts it, back in float64."""
    return np.asarray(parity.BACKENDS[target.backend].to_numpy(target.asarray(x)), np.float64)


def _away_from_zero(x: np.ndarray) -> bool:
    return bool(np.all(((x >= -10) & (x <= -0.5)) | ((x >= 0.5) & (x <= 10))))


def _open_at_zero(x: np.ndarray) -> bool:
    return bool(np.all((x > 0) & (x <= 10)))


@parity.over()
@given(data=st.data())
def test_correct_reciprocal_away_from_zero(target: Target, data: st.DataObject) -> None:
    (x,) = data.draw(parity.operands(target, AWAY_FROM_ZERO, extremes=True), label="x")
    assert _away_from_zero(x), x
    assert _away_from_zero(_as_the_target_sees(target, x)), x
    parity.assert_matches_reference(one_over, target, (x,))


@parity.over()
@given(data=st.data())
def test_correct_log_on_an_open_interval(target: Target, data: st.DataObject) -> None:
    (x,) = data.draw(parity.operands(target, OPEN_AT_ZERO, extremes=True), label="x")
    assert _open_at_zero(x), x
    assert _open_at_zero(_as_the_target_sees(target, x)), x
    parity.assert_matches_reference(logarithm, target, (x,))


@parity.over()
def test_correct_log_at_the_ends_of_an_open_interval(target: Target) -> None:
    # The extreme draws put the lowest and the largest allowed value into an array: here, in
    # every dtype, its smallest normal number (not 0, nor a subnormal) and 10.
    x = find(parity.arrays(target, (2,), extremes=True, values="(0, 10]"), lambda _: True)
    seen = _as_the_target_sees(target, x)
    assert sorted(seen) == [float(torch.finfo(getattr(torch, target.dtype)).tiny), 10.0], seen
    parity.assert_matches_reference(logarithm, target, (x,))


def test_correct_fixed_operands_stay_in_holes_and_open_ends_in_every_dtype() -> None:
    for spec, inside in [(AWAY_FROM_ZERO, _away_from_zero), (OPEN_AT_ZERO, _open_at_zero)]:
        fixed = [parity.sized_operands(spec, 2000, seed=seed)[0] for seed in range(3)]
        fixed += [parity.edge_operands(spec, "smallest")[0]]
        for x, dtype in itertools.product(fixed, parity.DTYPES):
            assert inside(_as_the_target_sees(Target("torch", dtype), x)), (dtype, x)
    # Uniform within the union: both intervals drawn, about as often (they are as wide).
    drawn = parity.sized_operands(AWAY_FROM_ZERO, 2000)[0]
    assert 0.4 < np.mean(drawn < 0) < 0.6
    # 1 where the domain holds it, else the middle of its widest interval.
    assert parity.edge_operands(AWAY_FROM_ZERO, "smallest")[0].item() == 1.0
    spec = parity.Spec(shapes={"x": "..."}, values={"x": "(1, 3) | [5, 6]"})
    middle = parity.edge_operands(spec, "smallest")[0].item()
    assert 1 < middle < 3, middle
    assert abs(middle - 2) < 0.01, middle  # of the values bfloat16 holds inside (1, 3)


def test_correct_extreme_draws_leave_ordinary_calls() -> None:
    # operands(extremes=True) first draws whether a call holds extremes: the simplest example
    # is an ordinary call, within -10 to 10, so each run compares ordinary calls too.
    looking = settings(max_examples=200, database=None, phases=list(Phase))
    for dtype in ["float32", "float16"]:
        drawn = parity.operands(Target("torch", dtype), parity.Spec(shapes={"x": "...d"}), extremes=True)
        (x,) = find(drawn, lambda operands: operands[0].size > 0, settings=looking)
        assert np.all(np.abs(x) <= 10), x
        (x,) = find(drawn, lambda operands: np.abs(operands[0]).max() > 10, settings=looking)
        assert np.abs(x).max() == min(1e4, float(torch.finfo(getattr(torch, dtype)).eps) ** -0.5)


def test_correct_spec_refuses_a_domain_and_says_what_to_type() -> None:
    how = 'write intervals such as "(0, 10]"'
    for values, problem in [
        ("[0, 10", "'[0, 10' is not an interval"),
        ("(5, 1)", "its low end 5 is above its high end 1"),
        ("(1, 1)", "holds no value"),
        ("[0, ten]", "is not a number"),
        ("[-10, -0.5] [0.5, 10]", "is not an interval"),
        ((5, 1), "its low end 5 is above its high end 1"),
        ((0,), how),
    ]:
        with pytest.raises(ValueError, match="values 'x': ") as refused:
            parity.Spec(shapes={"x": "..."}, values={"x": values})  # type: ignore[dict-item]  # wrong on purpose
        assert problem in str(refused.value), refused.value
        assert how in str(refused.value) or isinstance(values, tuple), refused.value
    # Tuples as before; interval notation with open ends, unions and no bound.
    assert parity.Spec(shapes={"x": "..."}, values={"x": (0.0, None)}).value_range("x") == (0.0, None)
    spec = parity.Spec(shapes={"x": "..."}, values={"x": "(-inf, -1) | [1, inf)"})
    assert [str(interval) for interval in spec.domain("x")] == ["(-inf, -1)", "[1, inf)"]
    assert spec.value_range("x") == (None, None)


def test_correct_spec_declarations_are_checked() -> None:
    spec = parity.Spec(
        shapes={"x": "..."},
        no_gradient="torch.floor_divide returns no graph",
        cannot_hold={"float16": "exp(x) overflows from 11"},
    )
    assert spec.no_gradient == "torch.floor_divide returns no graph"
    with pytest.raises(ValueError, match="cannot_hold 'half': not a dtype; choose among"):
        parity.Spec(shapes={"x": "..."}, cannot_hold={"half": "why"})
    with pytest.raises(ValueError, match="cannot_hold 'float16': give the reason"):
        parity.Spec(shapes={"x": "..."}, cannot_hold={"float16": ""})
    with pytest.raises(TypeError, match="no_gradient=True: give the reason"):
        parity.Spec(shapes={"x": "..."}, no_gradient=True)  # type: ignore[arg-type,unused-ignore]
