"""`parity new --triton` in generated repos: with Triton, in both layouts, it writes a Triton port
laid out as softmax's (its kernels in a module of their own), which passes the repo's ruff and
mypy and whose tests report it as not implemented yet (XFAIL), nothing red, until it is written;
without Triton it is refused, saying how to switch Triton on, and nothing is written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.render import BIN, COMBINATIONS, Combination, Render, run, tree
from tests.scaffolded import PACKAGE, write_body
from tests.test_scaffold import environment, new_algorithm

WITH_TRITON = [combination for combination in COMBINATIONS if combination.triton]
WITHOUT_TRITON = [combination for combination in COMBINATIONS if not combination.triton]
LONGEST = "a_row_wise_norm_with_a_long_name"  # 32 characters, the most `parity new` takes
COMMANDS = {
    "rms_norm": ["rms_norm", "x:...d", "--param", "eps: float = 1e-6", "--triton"],
    # Two operands, one of integers: the dispatch checks both before the Triton port.
    "nll": ["nll", "logits:...c", "labels:...:int<c", "--triton"],
    LONGEST: [LONGEST, "values_of_the_rows_to_normalise:...d", "--param", "eps: float = 1e-6", "--triton"],
}
# rms_norm's reference and ports (JAX's where the repo has JAX), written as a researcher would: its Triton port alone
# stays a stub.
RMS_NORM = {
    "numpy": "return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)",
    "pytorch": "return x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps)",
    "jax": "import jax.numpy as jnp\n\n    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)",
}


def triton_files(combination: Combination, name: str) -> tuple[Path, Path]:
    """Where `name`'s Triton port and its kernels are, under src/<package>/: softmax's places."""
    if combination.layout == "single":
        return Path(f"{name}.py"), Path(f"_{name}_triton_kernels.py")
    return Path(name, "triton_impl.py"), Path(name, "_triton_kernels.py")


# One render (the split layout, without JAX: the fewest targets): both layouts' files are the
# package's own tests (packages/parity/tests/test_new_triton.py); here the repo's tools run them.
@pytest.mark.slow
@pytest.mark.parametrize("combination", WITH_TRITON[-1:], ids=lambda combination: combination.id)
def test_scaffolds_a_triton_port_whose_tests_xfail_until_written(
    rendered: Render, combination: Combination, tmp_path: Path, mypy_cache: Path
) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    source = repo / "src" / PACKAGE
    for name, command in COMMANDS.items():
        result = new_algorithm(repo, *command)
        assert result.returncode == 0, result.stdout + result.stderr
        port, kernels = triton_files(combination, name)
        assert f"created {Path('src', PACKAGE, kernels)}" in result.stdout
        assert f"_{name}_triton with its kernels" in " ".join(result.stdout.split())
        assert f"def _{name}_triton(" in (source / port).read_text(encoding="utf-8")
        assert f"def {name}_rows(" in (source / kernels).read_text(encoding="utf-8")
        test_module = (repo / "tests" / f"test_{name}.py").read_text(encoding="utf-8")
        assert 'BACKENDS = [*parity.DEFAULT, "triton"]' in test_module
    public = (source / ("nll.py" if combination.layout == "single" else "nll/api.py")).read_text(encoding="utf-8")
    assert "if triton_runs(logits) and triton_runs(labels):" in public

    # The repo's own tools, as its CI runs them.
    run([BIN / "ruff", "check", "--no-cache", "."], cwd=repo)
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)
    run([BIN / "mypy", "--cache-dir", mypy_cache], cwd=repo, env=environment(repo))

    # rms_norm's reference and other ports written: they pass; its Triton port, a stub, is an
    # expected failure on every test that runs it, and nothing fails.
    module = source / ("rms_norm.py" if combination.layout == "single" else "rms_norm")
    for backend, body in list(RMS_NORM.items())[: 3 if combination.jax else 2]:
        path = module if combination.layout == "single" else module / f"{backend}_impl.py"
        write_body(path, f"_rms_norm_{backend}", f"    {body}")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rxX", "tests/test_rms_norm.py"]
    result = subprocess.run(command, cwd=repo, env=environment(repo), capture_output=True, text=True, check=False)
    summary = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout + result.stderr
    assert "xfailed" in summary, result.stdout
    assert not re.search(r"\d+ (failed|error|xpassed)", summary), result.stdout
    assert re.search(r"\d+ passed", summary), result.stdout
    xfailed = re.findall(r"^XFAIL tests/test_rms_norm\.py::(\w+)\[([\w-]+)\] - (.*)$", result.stdout, re.MULTILINE)
    assert all("triton" in target.split("-") for _, target, _ in xfailed), xfailed
    expected = {
        "test_matches_reference",
        "test_edge_shapes",
        "test_gradient_matches_reference",
        "test_second_derivative_matches",
        "test_forward_mode_matches_reverse",
        "test_compiles_to_one_graph",
    }
    assert {test for test, _, _ in xfailed} == expected, xfailed
    assert all(why.startswith("not implemented yet: write _rms_norm_triton, the Triton port") for _, _, why in xfailed)


@pytest.mark.parametrize("combination", WITHOUT_TRITON, ids=lambda combination: combination.id)
def test_refused_without_triton_writing_nothing(rendered: Render, combination: Combination, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    before = tree(repo)
    refused = new_algorithm(repo, *COMMANDS["rms_norm"])
    assert refused.returncode == 2, refused.stdout + refused.stderr
    message = " ".join(refused.stderr.split())
    assert "--triton: this repo has no Triton backend" in message
    assert "Switch it on first with `copier update --defaults --data triton=true`" in message
    assert "docs/guide/updating.md" in message
    assert tree(repo) == before
