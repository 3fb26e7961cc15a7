"""A Triton port, as a repo with a ``triton`` extra meets it: without CUDA the plugin runs its
kernels in Triton's interpreter, on CPU tensors, and compares them with the NumPy reference like
any port; a kernel that drops the tail of a row fails, naming the elements."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton", reason="Requires: triton (Linux wheels only)")

#: A NumPy reference and its Triton port, which the public function would send CUDA tensors.
TESTS = """
import numpy as np
import torch
import triton
import triton.language as tl

import parity


@triton.jit
def _double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = lanes < LIMIT
    tl.store(y_ptr + lanes, 2.0 * tl.load(x_ptr + lanes, mask=inside), mask=inside)


def _double_triton(x):
    x = x.contiguous()  # the kernel indexes x as laid end to end
    y = torch.empty_like(x)
    n = x.numel()
    _double_kernel[(triton.cdiv(n, 16),)](x, y, n, BLOCK=16)
    return y


def double(x):
    if isinstance(x, np.ndarray):
        return 2.0 * x
    return _double_triton(x) if x.is_cuda else 2.0 * x


@parity.over(["triton"], ["float32"], devices=["cpu"])
def test_double(target):
    parity.assert_matches_reference(double, target, (np.arange(37.0),))
"""


def run(pytester: pytest.Pytester, limit: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\n")
    pytester.makepyprojecttoml(
        '[project]\nname = "doubling"\nversion = "0"\n'
        '[project.optional-dependencies]\ntriton = ["triton"]\n'
    )
    pytester.makepyfile(test_module=TESTS.replace("LIMIT", limit))
    return pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")


@pytest.mark.skipif(torch.cuda.is_available(), reason="Requires: a machine without a CUDA device")
def test_a_kernel_runs_in_the_interpreter_and_matches_the_reference(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, "n")
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines([r".*test_double\[triton-float32-cpu\] PASSED \(1 compared\)"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="Requires: a machine without a CUDA device")
def test_a_kernel_that_drops_a_row_s_tail_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, "32")  # the last block's 5 elements are never written
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*double on triton-float32-cpu differs * at 5 of 37 elements*"])
