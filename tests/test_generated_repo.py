"""The research code a repo is generated with is clean and works, in every combination of options.

For each combination (single/split layout, with and without JAX), in a private copy of the render:
the repo's own `ruff check`, `ruff format --check` and `mypy` pass, and its test suite passes for
real; importing the package does not import JAX. (The two layouts hold the same functions by
construction: each is written once, in templates/examples/.) The scaffold has its own tests
(test_scaffold.py), and so has the training example (test_training.py).

The generated suite runs with `PYTHONPATH=src` (nothing installed), as on a machine without
network access; the generated noxfile installs the package for real.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.render import (
    BIN,
    COMBINATIONS,
    COOKIECUTTER_JSON,
    TOOLS,
    Combination,
    Render,
    only_child,
    quick_share,
    render_cookiecutter,
    run,
)
from tests.scaffolded import COMMANDS
from tests.torch_index import TORCH_INDEX_HOST, resolves

PACKAGE = "my_research_project"  # from the default answers
ALGORITHMS = ("softmax", "cross_entropy", "log_softmax")
NEWER_PYTHONS = COOKIECUTTER_JSON["python_version"][1:]


def environment(repo: Path) -> dict[str, str]:
    """The environment for commands in a generated repo: its sources importable, no settings
    of the user's that change what its suite does."""
    env = {key: value for key, value in os.environ.items() if key not in {"REQUIRE_DEVICE", "HYPOTHESIS_PROFILE"}}
    return {**env, "PYTHONPATH": str(repo / "src")}


def run_in(repo: Path, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command in `repo`; with `check`, fail with its whole output unless it succeeds."""
    if check:
        return run(args, cwd=repo, env=environment(repo))
    command = [str(arg) for arg in args]
    return subprocess.run(command, cwd=repo, env=environment(repo), capture_output=True, text=True, check=False)


def pytest_in(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_in(repo, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, check=check)


@pytest.mark.slow
def test_passes_ruff_and_mypy(repo: Path, mypy_cache: Path) -> None:
    run_in(repo, BIN / "ruff", "check", "--no-cache", ".")
    run_in(repo, BIN / "ruff", "format", "--check", "--no-cache", ".")
    run_in(repo, BIN / "mypy", "--cache-dir", mypy_cache)


@pytest.mark.slow
# `nox -s proofs`: the default `nox` checks the oldest Python's rules in every combination (above).
@pytest.mark.parametrize("python_version", quick_share(NEWER_PYTHONS, ()))
def test_passes_ruff_and_mypy_for_newer_pythons(
    template_repo: Path, tmp_path: Path, mypy_cache: Path, python_version: str
) -> None:
    # pyupgrade's rules depend on the oldest Python supported: code and scaffold stay clean.
    answers = {"package_name": "zeta_model", "python_version": python_version, "layout": "split", "jax": True}
    render_cookiecutter(template_repo, tmp_path, answers, typed=False)
    repo = only_child(tmp_path)
    run_in(repo, *TOOLS, "new", *COMMANDS["attention"])
    run_in(repo, BIN / "ruff", "check", "--no-cache", ".")
    run_in(repo, BIN / "ruff", "format", "--check", "--no-cache", ".")
    run_in(repo, BIN / "mypy", "--cache-dir", mypy_cache)


@pytest.mark.slow
def test_suite_passes_in_seconds(repo: Path, combination: Combination) -> None:
    start = time.perf_counter()
    result = pytest_in(repo)
    seconds = time.perf_counter() - start
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), result.stdout
    assert not re.search(r"failed|error|xfail|xpass", summary), result.stdout
    # Every target that can run here ran: only missing devices are skipped, and a capability a
    # port lacks (the Triton softmax's second derivative and forward mode), quoting PyTorch.
    skips = re.findall(r"SKIPPED \[\d+\] \S+: (.*)", result.stdout)
    absent = [reason for reason in skips if re.search(r" on triton-\S+: .* is absent \(", reason)]
    devices = [reason for reason in skips if reason not in absent]
    assert all(reason.startswith("Requires: ") and "device" in reason for reason in devices), skips
    assert len(absent) == (2 if combination.triton else 0), absent
    print(f"{combination.id}: {summary} ({seconds:.1f} s wall)")


@pytest.mark.slow
def test_jax_compilations_are_kept_for_the_next_run(rendered: Render, tmp_path: Path) -> None:
    # XLA compiles each jitted function per shape in ~60 ms on a CPU: kept in pytest's cache, a
    # second run loads every one; with pytest's cache off, nothing is kept. Same examples each run.
    repo = Path(shutil.copytree(rendered("cookiecutter", Combination("single", jax=True)), tmp_path / "repo"))
    env = {**environment(repo), "HYPOTHESIS_PROFILE": "ci"}
    command = [sys.executable, "-m", "pytest", "-q", "tests/test_softmax.py", "-k", "jax and matches_reference"]
    logged = ["-o", "log_cli=true", "--log-cli-level=DEBUG"]  # JAX logs each cache hit and miss

    def misses_and_hits(*options: str) -> tuple[int, int]:
        out = run([*command, *logged, *options], cwd=repo, env=env).stdout
        return out.count("PERSISTENT COMPILATION CACHE MISS"), out.count("Persistent compilation cache hit")

    compilations, hits = misses_and_hits("-p", "no:cacheprovider")
    assert (hits, (repo / ".pytest_cache").exists()) == (0, False)
    first = misses_and_hits()
    assert first[0] > 0
    assert misses_and_hits() == (0, compilations)


def test_import_does_not_import_jax(rendered: Render, combination: Combination, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    code = (
        f"import sys, numpy, torch, {PACKAGE} as package\n"
        "package.softmax(numpy.ones(3)), package.softmax(torch.ones(3))\n"
        "package.cross_entropy(numpy.zeros((2, 3)), numpy.array([0, 2]))\n"
        "print(sorted(name for name in sys.modules if name.partition('.')[0] == 'jax'))\n"
        "print(package.__all__, [callable(getattr(package, name)) for name in package.__all__])\n"
    )
    jax, exports = run_in(repo, sys.executable, "-c", code).stdout.strip().splitlines()
    assert jax == "[]"
    assert exports == f"{sorted(ALGORITHMS)} {[True] * len(ALGORITHMS)}"


@pytest.mark.slow
def test_nox_tests_session_reinstalls_only_what_changed(rendered: Render, tmp_path: Path) -> None:
    # The inner loop: run the tests, run them again, edit a port, run them again. TORCH_INDEX_URL
    # is the user's, or unset: then the noxfile chooses the torch index itself.
    repo = Path(shutil.copytree(rendered("cookiecutter", COMBINATIONS[0]), tmp_path / "repo"))
    env = environment(repo)
    env.pop("PYTHONPATH")

    def nox_tests() -> subprocess.CompletedProcess[str]:
        pytest_args = ["tests/test_cross_entropy.py", "-q", "-p", "no:cacheprovider", "-x"]  # the edited port's
        command = [str(BIN / "nox"), "-s", "tests", "--", *pytest_args]
        return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)

    first = nox_tests()
    assert first.returncode == 0, first.stdout + first.stderr
    if "TORCH_INDEX_URL" not in env and not resolves(TORCH_INDEX_HOST):
        # As on an offline cluster with a mirror: torch from pip's configuration, decided at once.
        assert f"torch from pip's own index and configuration ({TORCH_INDEX_HOST} does not resolve)" in first.stderr
        assert "Creating virtual environment (virtualenv)" in first.stderr
    again = nox_tests()
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing to install" in again.stderr
    assert "pip install" not in again.stderr
    # A bug in the port must reach the tests: the project is reinstalled, and torch is not.
    port = repo / "src" / PACKAGE / "cross_entropy.py"  # single layout
    text = port.read_text(encoding="utf-8")
    port.write_text(text.replace("return -picked.mean()", "return -picked.sum()"), encoding="utf-8")
    edited = nox_tests()
    assert edited.returncode != 0, edited.stdout + edited.stderr
    assert "install . --no-deps" in edited.stderr
    assert "torch==" not in edited.stderr


@pytest.mark.slow
def test_thorough_session_gives_the_seed_of_a_failure(rendered: Render, tmp_path: Path) -> None:
    # A bug only extreme values show, as the weekly CI job would meet it: the log gives the seed
    # that repeats the run, first and at the failure.
    repo = Path(shutil.copytree(rendered("cookiecutter", COMBINATIONS[0]), tmp_path / "repo"))
    port = repo / "src" / PACKAGE / "softmax.py"  # single layout
    text = port.read_text(encoding="utf-8")
    port.write_text(text.replace("shifted = x - x.amax(dim=axis, keepdim=True)", "shifted = x"), encoding="utf-8")
    env = {**environment(repo), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("HYPOTHESIS_SEED", None)
    command = ["nox", "--no-venv", "--no-install", "-s", "tests_thorough", "--", "tests/test_softmax.py", "-x"]
    result = subprocess.run(
        [*command, "-k", "matches_reference"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode != 0, result.stdout + result.stderr
    seeds = re.findall(r"HYPOTHESIS_SEED=(\d+) nox -s tests_thorough", result.stderr)
    assert len(seeds) == 2, result.stderr
    assert seeds[0] == seeds[1], result.stderr
    assert f"failed with hypothesis seed {seeds[0]}; to reproduce it" in result.stderr
