"""Second derivatives and forward mode (parity/derivatives.py), and a capability a port lacks
(parity/capabilities.py): hand-written `autograd.Function` ports of a row-wise RMS
normalisation, correct in the classic style (forward with ctx) and in the new one
(setup_context), and with the bugs a first-gradient test cannot see: an intermediate saved
outside autograd, a backward under no_grad, a wrong jvp. A missing jvp, or vmap of a
classic-style Function, is skipped with the library's reason unless the SPEC requires it."""

from __future__ import annotations

import pytest

#: The reference, its ports (PORT is replaced by one of them) and the tests.
TESTS = """
import numpy as np
import torch

import parity

SPEC = parity.Spec(shapes={"x": "...n"}, min_dims=1, requires=REQUIRES)
EPS = 1e-6
X = np.random.default_rng(7).normal(size=(3, 4))


def rms(x):
    if isinstance(x, np.ndarray):
        return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + EPS)
    return PORT(x)


def relu(x):
    if isinstance(x, np.ndarray):
        return np.maximum(x, 0.0)
    return torch.clamp(torch.relu(x), max=0.5)


def _r(x):
    return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)


def _back(r, y, g):
    return r * (g - y * (g * y).mean(-1, keepdim=True))


class Classic(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * _r(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return _back(_r(x), x * _r(x), g)


class SavedOutside(torch.autograd.Function):  # r computed in forward, outside autograd
    @staticmethod
    def forward(ctx, x):
        r = _r(x)
        ctx.save_for_backward(x, r)
        return x * r

    @staticmethod
    def backward(ctx, g):
        x, r = ctx.saved_tensors  # r: a constant to autograd, its dependence on x lost
        return _back(r, x * r, g)


class NoGrad(Classic):
    @staticmethod
    def backward(ctx, g):
        with torch.no_grad():
            return Classic.backward(ctx, g)


class NewStyle(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * _r(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return _back(_r(x), x * _r(x), g)

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return _back(_r(x), x * _r(x), t)  # J is symmetric: J t = Jᵀ t


class WrongJvp(NewStyle):
    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return _r(x) * t  # the projection's term is missing


class WithoutJvp(NewStyle):
    jvp = torch.autograd.Function.jvp


class WithoutVmapRule(NewStyle):
    generate_vmap_rule = False


def classic(x):
    return Classic.apply(x)


def saved_outside(x):
    return SavedOutside.apply(x)


def no_grad(x):
    return NoGrad.apply(x)


def new_style(x):
    return NewStyle.apply(x)


def wrong_jvp(x):
    return WrongJvp.apply(x)


def without_jvp(x):
    return WithoutJvp.apply(x)


def without_vmap_rule(x):
    return WithoutVmapRule.apply(x)


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_gradient(target):
    parity.assert_gradient_matches_reference(rms, target, (X,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_second_derivative(target):
    parity.assert_second_derivative_matches(rms, target, (X,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_forward_mode(target):
    parity.assert_forward_mode_matches(rms, target, (X,))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_vmap(target):
    parity.assert_vmap_matches_loop(rms, target, (X,), spec=SPEC)


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_clamped_relu(target):
    x = np.array([[-1.0, 0.2, 0.7, 3.0], [1e-7, -1e-7, 0.5 + 1e-7, 2.0]])
    parity.assert_second_derivative_matches(relu, target, (x,))
    parity.assert_forward_mode_matches(relu, target, (x,))
"""


def run(pytester: pytest.Pytester, port: str, requires: str = "()") -> pytest.RunResult:
    pytester.makeini("[pytest]\n")
    tests = TESTS.replace("PORT", port).replace("REQUIRES", requires)
    pytester.makepyfile(test_module=tests)
    return pytester.runpytest_subprocess("-v", "-rs", "-p", "no:cacheprovider")


def test_a_correct_new_style_function_passes_every_check(pytester: pytest.Pytester) -> None:
    run(pytester, "new_style").assert_outcomes(passed=5)


def test_a_correct_classic_function_passes_and_lacks_vmap_and_forward_mode(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, "classic")
    result.assert_outcomes(passed=3, skipped=2)
    result.stdout.re_match_lines(
        [
            r".*forward-mode AD .* is absent \(RuntimeError: .*setup_context staticmethod.*",
            r".*torch.func.vmap is absent .*setup_context staticmethod.*requires=\{\"vmap\"\}.*",
        ],
        consecutive=False,
    )


def test_an_intermediate_saved_outside_autograd_fails_the_second_derivative(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, "saved_outside")
    result.assert_outcomes(passed=2, failed=1, skipped=2)  # the gradient is right
    result.stdout.fnmatch_lines(
        [
            "*test_second_derivative*FAILED*",
            (
                "*the second derivative (a Hessian-vector product) of rms on torch-float64-cpu "
                "differs from central differences of the port's own first gradient*"
            ),
            "*an intermediate saved outside autograd*",
        ],
        consecutive=False,
    )
    assert "Here the first gradient carries no graph" not in result.stdout.str()


def test_a_backward_under_no_grad_fails_the_second_derivative(pytester: pytest.Pytester) -> None:
    result = run(pytester, "no_grad")
    result.assert_outcomes(passed=2, failed=1, skipped=2)
    result.stdout.fnmatch_lines(
        ["*Worst at index (): got 0.0*", "*Here the first gradient carries no graph*"],
        consecutive=False,
    )


def test_a_wrong_jvp_fails_forward_mode(pytester: pytest.Pytester) -> None:
    result = run(pytester, "wrong_jvp")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        ["*forward mode (a Jacobian-vector product) of rms * disagrees with its reverse mode*"]
    )


def test_a_missing_jvp_is_skipped_until_the_spec_requires_forward_mode(
    pytester: pytest.Pytester,
) -> None:
    run(pytester, "without_jvp").assert_outcomes(passed=4, skipped=1)
    result = run(pytester, "without_jvp", '{"forward_mode"}')
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            (
                "*forward-mode AD * is absent (NotImplementedError: You must implement the jvp "
                "function*SPEC requires 'forward_mode'*"
            )
        ]
    )


def test_a_new_style_function_without_a_vmap_rule_lacks_vmap(pytester: pytest.Pytester) -> None:
    # A researcher's first Function: setup_context, backward and jvp, no generate_vmap_rule.
    result = run(pytester, "without_vmap_rule")
    result.assert_outcomes(passed=4, skipped=1)
    result.stdout.re_match_lines(
        [r".*torch.func.vmap is absent \(RuntimeError: You tried to vmap over WithoutVmapRule.*"],
        consecutive=False,
    )


def test_a_spec_refuses_an_unknown_capability() -> None:
    import parity

    with pytest.raises(ValueError, match="capabilities among"):
        parity.Spec(shapes={"x": "..."}, requires={"double_backward"})


GRAPH_BREAK = """
import numpy as np
import torch

import parity

SPEC = parity.Spec(shapes={"x": "...n"}, requires=REQUIRES)


def scaled(x):
    if isinstance(x, np.ndarray):
        return x * 2.0
    torch._dynamo.graph_break()  # as a print, or a call dynamo cannot trace, would
    return x * 2.0


@parity.over(["torch"], ["float32"], devices=["cpu"])
def test_compiles(target):
    parity.assert_compiled_matches_eager(scaled, target, (np.ones((2, 3)),))
"""


@pytest.mark.parametrize("requires", ["()", '{"one_graph"}'])
def test_a_graph_break_is_skipped_until_the_spec_requires_one_graph(
    pytester: pytest.Pytester, requires: str
) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_module=GRAPH_BREAK.replace("REQUIRES", requires))
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    if requires == "()":
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["*compiling to one graph * is absent (Unsupported: *"])
    else:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*is absent *SPEC requires 'one_graph'*"])
