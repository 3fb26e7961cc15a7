"""The end of a run, as the generated repos' `-ra` shows it: the tests skipped for a missing
device summed up in a line per reason (not a SKIPPED line each, pointing into the plugin), other
skips kept as they were; the tests deselected for the `slow` marker named, with how to run
them; and a test that compared fewer calls than its examples says why."""

from __future__ import annotations

import pytest
import torch

TESTS = """
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import parity


def scale(x):
    if isinstance(x, np.ndarray):
        return 2.0 * x
    return torch.mul(x, 2.0)


@parity.over(["torch"], ["float64"], devices=["cpu", "cuda", "mps"])
@given(data=st.data())
def test_scale(target, data):
    (x,) = data.draw(parity.operands(target, parity.Spec(shapes={"x": "..."})))
    parity.assert_matches_reference(scale, target, (x,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
@settings(max_examples=10)
@given(data=st.data())
def test_sometimes(target, data):
    (x,) = data.draw(parity.operands(target, parity.Spec(shapes={"x": "..."})))
    if data.draw(st.integers(0, 9), label="which") < 5:
        parity.assert_matches_reference(scale, target, (x,))


def test_skipped_for_its_own_reason():
    pytest.skip("a reason of the test's own")


@pytest.mark.slow
def test_slow():
    pass
"""


@pytest.fixture
def result(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(test_module=TESTS)
    return pytester.runpytest_subprocess("-v", "-ra", "-p", "no:cacheprovider", "-m", "not slow")


@pytest.mark.skipif(torch.cuda.is_available(), reason="Requires: a machine without a CUDA device")
def test_device_skips_are_one_line(result: pytest.RunResult) -> None:
    result.assert_outcomes(passed=2, skipped=3, deselected=1)
    reasons = "1: Requires: CUDA device (none found); 1: Requires: MPS device (none found)"
    lines = [
        "SKIPPED * a reason of the test's own",
        f"parity: 2 targets skipped for a missing device ({reasons})",
    ]
    result.stdout.fnmatch_lines(lines)
    short = result.stdout.str().partition("short test summary info")[2]
    assert "SKIPPED [1] " in short  # the test's own skip, kept
    assert "Requires: CUDA device (none found)\n" not in short.replace("found))", "")


def test_deselected_slow_tests_are_named(result: pytest.RunResult) -> None:
    result.stdout.fnmatch_lines(["parity: 1 deselected: marked slow *`pytest -m slow` runs them"])


def test_fewer_calls_compared_than_examples_say_why(result: pytest.RunResult) -> None:
    result.stdout.re_match_lines(
        [r".*test_sometimes\[torch-float64-cpu\] PASSED \(\d compared of 10 examples: .+\)"]
    )
