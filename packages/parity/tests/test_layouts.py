"""Operands in the layouts a model hands a port (parity/layouts.py): `assert_matches_reference`
calls a PyTorch or Triton port again on the same values as a transposed view, a stepped slice at
a storage offset and, where values repeat, a broadcast; a port that raises there, or reads its
operand as if contiguous, fails, naming the layout, the shape, the strides and the offset."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parity.layouts import torch_layouts

#: A reference and ports of it, each a public function that sends NumPy arrays to the reference.
TESTS = """
import numpy as np
import torch

import parity


def _contiguous_strides(shape):
    return torch.empty(shape).stride()


def centered(x):
    if isinstance(x, np.ndarray):
        return x - x.mean(axis=-1, keepdims=True)
    return PORT(x)


def right(x):
    return x - x.mean(dim=-1, keepdim=True)


def flattened_by_view(x):
    rows = x.view(-1, x.shape[-1])
    return (rows - rows.mean(dim=-1, keepdim=True)).view(x.shape)


def read_as_contiguous(x):  # what a kernel indexing row * n + lane does with a view
    x = torch.as_strided(x, x.shape, _contiguous_strides(x.shape))
    return x - x.mean(dim=-1, keepdim=True)


def total(x):
    if isinstance(x, np.ndarray):
        return x.sum()
    return x.view(-1).sum()  # a broadcast axis (stride 0) does not merge with the others


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_rows(target):
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    parity.assert_matches_reference(centered, target, (x,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_vector(target):
    parity.assert_matches_reference(centered, target, (np.arange(5.0),))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_repeated_rows(target):
    x = np.array([[[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]])  # no transposed view: (1, 3)
    parity.assert_matches_reference(total, target, (x,))
"""


def run(pytester: pytest.Pytester, port: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_module=TESTS.replace("PORT", port))
    return pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")


def test_a_port_that_takes_any_layout_passes(pytester: pytest.Pytester) -> None:
    result = run(pytester, "right")
    result.assert_outcomes(passed=2, failed=1)  # `total` flattens with view
    result.stdout.re_match_lines([r".*test_rows\[torch-float64-cpu\] PASSED \(1 compared\)"])


def test_a_view_that_raises_on_a_transposed_operand_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, "flattened_by_view")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*centered on torch-float64-cpu raised RuntimeError: view size is not compatible*",
            (
                "*on the operands laid out as a transposed view of its last two axes: x (shape (2, "
                "3, 4), strides (12, 1, 3), storage offset 0); on the same values contiguous it "
                "returns*"
            ),
        ]
    )


def test_a_port_reading_a_view_as_contiguous_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, "read_as_contiguous")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            "*centered on torch-float64-cpu differs from the float64 NumPy reference at *",
            "*On the operands laid out as a transposed view of * x (shape (2, 3, 4)*",
            (
                "*On the operands laid out as a slice with a step of 2 of a larger buffer, at a "
                "storage offset: x (shape (5,), strides (2,), storage offset 1)*"
            ),
        ]
    )


def test_a_broadcast_operand_is_handed_where_values_repeat(pytester: pytest.Pytester) -> None:
    result = run(pytester, "right")
    result.stdout.fnmatch_lines(
        [
            "*total on torch-float64-cpu raised RuntimeError*",
            (
                "*laid out as broadcast by expand (stride 0) along the axes where its values "
                "repeat: x (shape (2, 1, 3), strides (0, 3, 1), storage offset 0)*"
            ),
        ]
    )


def test_the_layouts_hold_the_same_values() -> None:
    x = torch.tensor(np.random.default_rng(1).normal(size=(2, 3, 4)))
    repeated = torch.tensor([[1.0, -0.0], [1.0, -0.0]])
    zeros = torch.tensor([[0.0, -0.0], [0.0, -0.0], [-0.0, 0.0]])
    labels = torch.arange(6).reshape(2, 3)
    layouts = torch_layouts([x, repeated, zeros, labels, 3.0], ["x", "r", "z", "labels", "s"])
    assert [layout.name.split()[0] for layout in layouts] == ["a", "a", "broadcast"]
    for layout in layouts:
        for before, after in zip([x, repeated, zeros, labels], layout.arguments, strict=False):
            assert torch.equal(before, after)
            assert torch.equal(torch.signbit(before), torch.signbit(after))
        assert layout.arguments[-1] == 3.0
    transposed, stepped, expanded = (layout.arguments for layout in layouts)
    assert transposed[0].stride() == (12, 1, 3)
    assert (stepped[0].stride(), stepped[0].storage_offset()) == ((24, 8, 2), 1)
    assert expanded[1].stride() == (0, 1)
    assert expanded[2] is zeros, "a -0.0 where another row holds 0.0 is not a repeat"
    assert "x (shape (2, 3, 4), strides (12, 1, 3), storage offset 0)" in layouts[0].described
