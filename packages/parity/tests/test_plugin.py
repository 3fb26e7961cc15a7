"""The pytest plugin, as any repo with a NumPy reference and a port meets it: installed, it is
loaded with no conftest; `pytest -v` says how many calls a test compared; a stub that raises a
`NotYetImplemented` is an expected failure with its message; a required device that is missing
is an error instead of a skip."""

from __future__ import annotations

import pytest
import torch

#: A NumPy reference, its PyTorch port and the tests a researcher writes for them.
TESTS = '''
import numpy as np
import torch
from hypothesis import given, strategies as st

import parity


class NotYetImplemented(NotImplementedError):
    """Known by its class name, whichever package defines it."""


def scale(x):
    if isinstance(x, np.ndarray):
        return 2.0 * x
    return torch.mul(x, 2.0)


def not_written(x):
    raise NotYetImplemented("not implemented yet: write _not_written_pytorch")


@parity.over(["torch"], ["float64"], devices=DEVICES)
@given(data=st.data())
def test_scale(target, data):
    (x,) = data.draw(parity.operands(target, parity.Spec(shapes={"x": "..."})))
    parity.assert_matches_reference(scale, target, (x,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_not_written(target):
    parity.assert_matches_reference(not_written, target, (np.ones(3),))
'''


def run(pytester: pytest.Pytester, devices: list[str], *options: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\n")  # its own configuration, wherever the temporary folder is
    pytester.makepyfile(test_module=f"DEVICES = {devices!r}\n" + TESTS)
    return pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider", *options)


def test_a_matching_port_passes_and_says_how_many_calls_it_compared(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, ["cpu"])
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.re_match_lines([r".*test_scale\[torch-float64-cpu\] PASSED \(\d+ compared\)"])


def test_a_stub_is_an_expected_failure_with_its_message(pytester: pytest.Pytester) -> None:
    result = run(pytester, ["cpu"], "-rx")
    result.stdout.fnmatch_lines(
        ["*XFAIL*test_not_written*not implemented yet: write _not_written_pytorch*"]
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="Requires: a machine without a CUDA device")
def test_a_missing_device_skips_unless_it_is_required(pytester: pytest.Pytester) -> None:
    run(pytester, ["cuda"]).assert_outcomes(skipped=1, xfailed=1)
    required = run(pytester, ["cuda"], "--require-device", "cuda")
    required.assert_outcomes(errors=1, xfailed=1)  # failed in its setup
    required.stdout.fnmatch_lines(["*but --require-device or REQUIRE_DEVICE asks for it*"])
