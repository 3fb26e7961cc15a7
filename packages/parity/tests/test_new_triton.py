"""`parity new --triton`, without a generated repo: the files it writes in each layout (a Triton
port beside the others, its kernels where softmax's are, the dispatch and the tests' backends),
their kernels running in Triton's interpreter, and its refusal in a repo without Triton."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parity_tools.new import (
    LINE_LENGTH,
    MAX_NAME_LENGTH,
    ROOT,
    Constraints,
    Parameter,
    Repo,
    files,
)

EPS = [Parameter("eps", "float", "1e-6")]
ANSWERS = "package_name: pkg\nlayout: {layout}\njax: false\n"


def scaffolded(layout: str, name: str = "rms_norm", **operands: str) -> dict[str, str]:
    """The files of `name` with --triton, by path under the repo's root (src/pkg/..., tests/...)."""
    written = files(
        Repo("pkg", layout, jax=False, triton=True),
        name,
        operands or {"x": "...d"},
        EPS,
        Constraints(),
        shared=False,
        triton=True,
    )
    return {path.relative_to(ROOT).as_posix(): text for path, text in written.items()}


def functions(text: str) -> list[str]:
    return [node.name for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)]


@pytest.mark.parametrize("layout", ["single", "split"])
def test_writes_the_port_its_kernels_the_dispatch_and_the_backends(layout: str) -> None:
    written = scaffolded(layout)
    if layout == "single":
        kernels = "src/pkg/_rms_norm_triton_kernels.py"
        assert set(written) == {"src/pkg/rms_norm.py", kernels, "tests/test_rms_norm.py"}
        public = port = written["src/pkg/rms_norm.py"]
        assert (
            "from ._dispatch import TORCH_FLOATS, NotYetImplemented, dispatch_error, triton_runs"
            in public
        )
    else:
        kernels = "src/pkg/rms_norm/_triton_kernels.py"
        assert {kernels, "src/pkg/rms_norm/triton_impl.py", "src/pkg/rms_norm/api.py"} <= set(
            written
        )
        public, port = (
            written["src/pkg/rms_norm/api.py"],
            written["src/pkg/rms_norm/triton_impl.py"],
        )
        assert "from .triton_impl import _rms_norm_triton\n" in public
        assert "from .._dispatch import TORCH_FLOATS, dispatch_error, triton_runs\n" in public
    # CUDA tensors to the Triton port, the others to PyTorch's, as softmax's public function.
    assert (
        "        if triton_runs(x):\n"
        "            return _rms_norm_triton(x, eps)\n"
        "        return _rms_norm_pytorch(x, eps)\n"
    ) in public
    assert "_rms_norm_triton" in functions(port)
    stub = 'msg = "not implemented yet: write _rms_norm_triton, the Triton port"\n'
    assert f"{stub}    raise NotYetImplemented(msg)" in port
    assert "import `rms_norm_rows` from there in this function" in " ".join(port.split())
    # The kernels: a forward and a backward kernel, their launch, the operator and its gradient.
    text = written[kernels]
    assert {"_forward_kernel", "_backward_kernel", "_launch", "rms_norm_rows"} <= set(
        functions(text)
    )
    assert '@torch.library.custom_op("pkg::rms_norm_rows", mutates_args=())' in text
    assert "rms_norm_rows.register_autograd(" in text
    # Unannotated, as softmax's kernels, for mypy (which reads no types of Triton's).
    assert "# mypy: disallow-untyped-defs=False, disallow-incomplete-defs=False\n" in text
    assert "# mypy: disallow-untyped-decorators=False\n" in text
    assert text.count("TODO") >= 3
    # The tests: the Triton port among the backends, compared, differentiated (once, twice, in
    # forward mode) and compiled.
    tests = written["tests/test_rms_norm.py"]
    assert 'BACKENDS = [*parity.DEFAULT, "triton"]\n' in tests
    assert tests.count("@parity.over(BACKENDS)\n") == 2
    assert tests.count("@parity.over(BACKENDS[1:], ") == 4


def test_the_triton_port_takes_the_operands_only_where_all_are_on_cuda() -> None:
    """With several operands, the Triton port takes them only where all are CUDA tensors (a CPU
    pointer in a GPU kernel would read garbage); its signature is the PyTorch port's."""
    written = scaffolded("single", "nll", logits="...c", labels="...")
    module = written["src/pkg/nll.py"]
    assert "if triton_runs(logits) and triton_runs(labels):" in module
    assert "def _nll_triton(logits: torch.Tensor, labels: torch.Tensor, eps: float)" in module


@pytest.mark.parametrize("layout", ["single", "split"])
def test_the_longest_names_stay_within_the_line_length(layout: str, tmp_path: Path) -> None:
    """Once formatted, as `parity new` formats them: docstrings and comments, which ruff
    format leaves as they are, included."""
    pytest.importorskip("ruff", reason="Requires: ruff (the dev environment's)")
    name, operand = "n" * MAX_NAME_LENGTH, "o" * MAX_NAME_LENGTH
    for path, text in scaffolded(layout, name, **{operand: "...d"}).items():
        (tmp_path / path.replace("/", "-")).write_text(text, encoding="utf-8")
    ruff = [sys.executable, "-m", "ruff"]
    options = ["--isolated", "--no-cache", "--line-length", str(LINE_LENGTH)]
    subprocess.run([*ruff, "format", *options, "."], cwd=tmp_path, check=True)
    check = [*ruff, "check", *options, "--select", "E501,W,F", "."]
    result = subprocess.run(check, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("layout", ["single", "split"])
def test_its_kernels_run_in_the_interpreter_as_the_identity(layout: str, tmp_path: Path) -> None:
    """Until written, the kernels compute the identity and its gradient, on rows of one partial
    block, a whole one, and whole blocks and a partial one; an empty tensor launches nothing."""
    pytest.importorskip("triton", reason="Requires: triton (Linux wheels only)")
    kernels = next(text for path, text in scaffolded(layout).items() if path.endswith("kernels.py"))
    (tmp_path / "kernels.py").write_text(kernels, encoding="utf-8")
    check = textwrap.dedent(
        """
        import torch
        from kernels import rms_norm_rows

        for width in (1, 7, 1024, 1100):
            x = torch.randn(3, width, dtype=torch.float64, requires_grad=True)
            y = rms_norm_rows(x)
            assert torch.equal(y, x)
            (g,) = torch.autograd.grad(y, x, torch.ones_like(y) * 2)
            assert torch.equal(g, torch.full_like(x, 2.0))
        assert rms_norm_rows(torch.ones(0, 4)).shape == (0, 4)
        print("identity")
        """
    )
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.strip() == "identity", result.stderr


def new_in(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "parity_tools", "new", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def test_refused_without_triton_writing_nothing(tmp_path: Path) -> None:
    (tmp_path / ".copier-answers.yml").write_text(ANSWERS.format(layout="single"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n[project.optional-dependencies]\njax = ["jax"]\n',
        encoding="utf-8",
    )
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    before = sorted(tmp_path.rglob("*"))
    refused = new_in(tmp_path, "rms_norm", "x:...d", "--triton")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    message = " ".join(refused.stderr.split())
    assert "--triton: this repo has no Triton backend" in message
    assert "copier update --defaults --data triton=true" in message
    assert "docs/guide/updating.md" in message
    assert sorted(tmp_path.rglob("*")) == before


def test_refused_beside_array_api(tmp_path: Path) -> None:
    (tmp_path / ".copier-answers.yml").write_text(ANSWERS.format(layout="split"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n[project.optional-dependencies]\ntriton = ["triton"]\n',
        encoding="utf-8",
    )
    refused = new_in(tmp_path, "rms_norm", "x:...d", "--triton", "--array-api")
    assert refused.returncode == 2
    assert "leave out --array-api" in refused.stderr
    assert not (tmp_path / "src").exists()
    assert not (tmp_path / "tests").exists()
