"""Test modules the package's tests write into folders of their own (pytester): ports whose
report and page the tests read. Each is its own module, as a row's algorithm is its test module's
name."""

# A port 3 times its allowance off in float32: atol + rtol * |expected|, float32's tolerance.
PLANTED = """
import numpy as np
import torch

import parity
from parity.room import assert_close


@parity.over(["torch"], ["float32"], devices=["cpu", "cuda"])
def test_planted(target):
    expected = np.linspace(-4.0, 4.0, 50)
    tolerance = parity.TOLERANCES["float32"]
    off = expected + 3 * (tolerance.atol + tolerance.rtol * np.abs(expected))
    actual = torch.tensor(off, dtype=torch.float32)
    assert_close(actual, expected, target=target, what="planted")
"""
# A correct port that lacks forward mode: a classic-style Function without a jvp.
DOUBLE = """
import numpy as np
import torch

import parity


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2.0 * x

    @staticmethod
    def backward(ctx, g):
        return 2.0 * g


def double(x):
    return 2.0 * x if isinstance(x, np.ndarray) else Double.apply(x)


X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_second_derivative(target):
    parity.assert_second_derivative_matches(double, target, (X,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_forward_mode(target):
    parity.assert_forward_mode_matches(double, target, (X,))
"""
