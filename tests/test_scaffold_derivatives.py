"""Second derivatives and forward mode in a scaffolded algorithm with a Triton port, rendered with
the real cookiecutter: `parity new rms_norm ... --triton`, its Triton port written as a researcher
would (a kernel for the forward, a new-style `autograd.Function` with a PyTorch backward and a
`jvp`), passes the repo's gradient, second-derivative and forward-mode tests; each bug planted in
that Function, invisible to the first gradient, fails the test that is there for it, with a
message that names the bug."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.render import BIN, COMBINATIONS, Combination, Render, run
from tests.scaffolded import PACKAGE, write_body
from tests.test_scaffold import environment, new_algorithm, pytest_in
from tests.test_scaffold_triton import RMS_NORM

WITH_TRITON = [combination for combination in COMBINATIONS if combination.triton and combination.layout == "split"]
#: The Triton port: the kernel for the forward, a Function whose backward and jvp are PyTorch's.
KERNELS = """
from typing import Any

import torch
import triton
import triton.language as tl

# mypy: disallow-untyped-defs=False, disallow-incomplete-defs=False
# mypy: disallow-untyped-decorators=False


@triton.jit
def _forward_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr, ACC: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * n
    lanes = tl.arange(0, BLOCK)
    total = tl.zeros((), ACC)
    for offset in range(0, n, BLOCK):
        inside = offset + lanes < n
        x = tl.load(x_ptr + start + offset + lanes, mask=inside, other=0.0).to(ACC)
        total += tl.sum(x * x, axis=0)
    r = 1.0 / tl.sqrt(total / n + eps)
    for offset in range(0, n, BLOCK):
        inside = offset + lanes < n
        x = tl.load(x_ptr + start + offset + lanes, mask=inside).to(ACC)
        tl.store(y_ptr + start + offset + lanes, (x * r).to(y_ptr.dtype.element_ty), mask=inside)


def _r(x: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def _back(x: torch.Tensor, r: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    y = x * r
    return r * (g - y * (g * y).mean(-1, keepdim=True))


class RmsNormRows(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x: torch.Tensor, eps: float) -> torch.Tensor:
        y = torch.empty_like(x)
        if x.numel():
            block = min(triton.next_power_of_2(x.shape[-1]), 1024)
            accumulate = tl.float64 if x.dtype == torch.float64 else tl.float32
            _forward_kernel[(x.shape[0],)](x, y, x.shape[-1], eps, BLOCK=block, ACC=accumulate)
        return y

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, float], output: torch.Tensor) -> None:
        del output  # torch passes it; this Function saves its input only (docs/guide/tests.md)
        x, ctx.eps = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, None]:
        (x,) = ctx.saved_tensors
        return _back(x, _r(x, ctx.eps), g), None

    @staticmethod
    def jvp(ctx: Any, t: torch.Tensor, _: Any) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return _back(x, _r(x, ctx.eps), t)  # the Jacobian is symmetric
"""
PORT = """    from ._triton_kernels import RmsNormRows

    rows = x.reshape(-1, x.shape[-1]).contiguous()
    y: torch.Tensor = RmsNormRows.apply(rows, eps)  # type: ignore[no-untyped-call]
    return y.reshape(x.shape)"""
#: Each bug: what it replaces in KERNELS, the test it fails, and what the failure says.
BUGS = {
    "saved-outside-autograd": (
        [
            ("ctx.save_for_backward(x)", "ctx.save_for_backward(x, _r(x, ctx.eps))"),
            (
                "(x,) = ctx.saved_tensors\n        return _back(x, _r(x, ctx.eps), g)",
                "x, r = ctx.saved_tensors\n        return _back(x, r, g)",
            ),
        ],
        "test_second_derivative_matches",
        "an intermediate saved outside autograd",
    ),
    "backward-under-no-grad": (
        [
            (
                "return _back(x, _r(x, ctx.eps), g), None",
                "with torch.no_grad():\n            return _back(x, _r(x, ctx.eps), g), None",
            )
        ],
        "test_second_derivative_matches",
        "the first gradient carries no graph",
    ),
    "wrong-jvp": (
        [("return _back(x, _r(x, ctx.eps), t)", "return _r(x, ctx.eps) * t")],
        "test_forward_mode_matches_reverse",
        "disagrees with its reverse mode",
    ),
}
SELECTED = "-k", "gradient_matches or second_derivative or forward_mode"


def scaffold(repo: Path) -> Path:
    """rms_norm scaffolded with a Triton port, its reference, PyTorch and Triton ports written;
    its kernels' module."""
    result = new_algorithm(repo, "rms_norm", "x:...d", "--param", "eps: float = 1e-6", "--triton")
    assert result.returncode == 0, result.stdout + result.stderr
    module = repo / "src" / PACKAGE / "rms_norm"
    for backend in ("numpy", "pytorch"):
        write_body(module / f"{backend}_impl.py", f"_rms_norm_{backend}", f"    {RMS_NORM[backend]}")
    write_body(module / "triton_impl.py", "_rms_norm_triton", PORT)
    kernels = module / "_triton_kernels.py"
    kernels.write_text('"""The Triton kernel of rms_norm, and its autograd.Function."""\n' + KERNELS, encoding="utf-8")
    return kernels


@pytest.mark.slow
@pytest.mark.parametrize("combination", WITH_TRITON, ids=lambda combination: combination.id)
def test_function_bugs_invisible_to_the_gradient_are_caught(
    rendered: Render, combination: Combination, tmp_path: Path, mypy_cache: Path
) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    kernels = scaffold(repo)
    result = pytest_in(repo, "-rs", "tests/test_rms_norm.py", *SELECTED)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASSED" in result.stdout or "passed" in result.stdout.splitlines()[-1]
    assert "is absent" not in result.stdout, result.stdout  # this port has every capability
    # Written as the tests guide says (`del output`, `apply` annotated), the Function is as clean
    # as the rest once `ruff check --fix` has dropped the stubs' imports, as `parity new` says.
    run([BIN / "ruff", "check", "--fix", "--no-cache", "."], cwd=repo)
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)
    run([BIN / "mypy", "--cache-dir", mypy_cache], cwd=repo, env=environment(repo))
    for name, (replacements, test, says) in BUGS.items():
        text = KERNELS
        for old, new in replacements:
            assert old in text, (name, old)
            text = text.replace(old, new)
        kernels.write_text(text, encoding="utf-8")
        result = pytest_in(repo, "tests/test_rms_norm.py", *SELECTED)
        failed = {line.split("::")[1].split(" ")[0] for line in result.stdout.splitlines() if line.startswith("FAILED")}
        assert failed == {f"{test}[triton-float64-cpu]"}, (name, result.stdout)
        assert says in " ".join(result.stdout.split()), (name, result.stdout)
