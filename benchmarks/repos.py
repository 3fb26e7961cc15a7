"""Generated repos: render them, update them, install them in a fresh environment, run their tests.

Everything runs through the real command-line tools (cookiecutter, copier, virtualenv, pip,
pytest), each timed as a whole process.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks.timing import Command, Stats, repeat, run, timed
from tests.render import BIN, COMBINATIONS, Combination, commit_all, git, only_child, snapshot_template
from tests.torch_index import torch_index_url

BY_ID = {combination.id: combination for combination in COMBINATIONS}
V1, V2 = "v1.0.0", "v2.0.0"
# The change between the two template versions that `copier update` brings into a repo.
V2_FILE, V2_LINE = "pyproject.toml", "# v2.0.0 of the template: a new convention\n"
PYTEST = ["-m", "pytest", "-q", "-p", "no:cacheprovider"]
SLOWEST = ["--durations=5", "--durations-min=0.5"]  # name the slowest tests in the results
DURATION_LINE = re.compile(r"^\d+\.\d+s (setup|call|teardown) +\S+")
PIP_INSTALL = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]


# Templates and renders ---------------------------------------------------------------------------


def template_snapshot(dest: Path) -> Path:
    """This working tree (uncommitted files included) as a git repository tagged v1.0.0."""
    return snapshot_template(dest, tag=V1)


def template_with_update(dest: Path) -> Path:
    """A template repository with two releases: v1.0.0 (this working tree) and v2.0.0 (v1.0.0
    plus one line in the generated pyproject.toml)."""
    template_snapshot(dest)
    with (dest / "template" / V2_FILE).open("a", encoding="utf-8") as file:
        file.write("\n" + V2_LINE)
    commit_all(dest, "v2: a new convention")
    git(dest, "tag", V2)
    return dest


def cookiecutter_command(template: Path, output_dir: Path, combination: Combination) -> Command:
    """Render with cookiecutter's defaults for all but the options, ignoring ~/.cookiecutterrc."""
    options = [f"layout={combination.layout}", f"jax={str(combination.jax).lower()}"]
    return [BIN / "cookiecutter", "--no-input", "--default-config", "-o", output_dir, template, *options]


def copier_command(template: Path, dest: Path, combination: Combination, ref: str | None = None) -> Command:
    """Render with copier's defaults for all but the options, from the latest tag or `ref`."""
    options = ["-d", f"layout={combination.layout}", "-d", f"jax={str(combination.jax).lower()}"]
    pinned = ["--vcs-ref", ref] if ref else []
    return [BIN / "copier", "copy", "--quiet", "--defaults", *options, *pinned, template, dest]


def render(template: Path, output_dir: Path, combination: Combination) -> Path:
    """Render `combination` with cookiecutter into `output_dir`; the generated repo."""
    run(cookiecutter_command(template, output_dir, combination))
    return only_child(output_dir)


def package_name(repo: Path) -> str:
    """The import name of the generated package (the one folder under src/ with an __init__.py)."""
    (package,) = [path.parent.name for path in (repo / "src").glob("*/__init__.py")]
    return package


def time_renders(template: Path, workdir: Path, combination: Combination, times: int) -> dict[str, Stats]:
    """Whole-process time of rendering a repo with each engine, each time into a fresh folder."""
    return {
        "cookiecutter": repeat(
            lambda i: cookiecutter_command(template, workdir / f"cookiecutter-{i}", combination), times
        ),
        "copier": repeat(lambda i: copier_command(template, workdir / f"copier-{i}", combination), times),
    }


def time_update(template: Path, workdir: Path, combination: Combination, times: int) -> Stats:
    """Whole-process time of `copier update` from v1.0.0 to v2.0.0 of `template`, each time in a
    fresh copy of a committed repo generated from v1.0.0; checks that the update arrived."""
    base = workdir / "update-base"
    run(copier_command(template, base, combination, ref=V1))
    commit_all(base, "generated from v1.0.0", init=True)
    copies = [workdir / f"update-{i}" for i in range(times)]

    def fresh_copy(i: int) -> None:
        shutil.copytree(base, copies[i], symlinks=True)

    stats = repeat(
        lambda _: [BIN / "copier", "update", "--defaults", "--quiet"], times, lambda i: copies[i], before=fresh_copy
    )
    for copy in copies:
        if not (copy / V2_FILE).read_text(encoding="utf-8").endswith(V2_LINE):
            raise AssertionError(f"`copier update` in {copy} did not bring v2.0.0's change to {V2_FILE}")
    return stats


# A fresh environment -----------------------------------------------------------------------------


def torch_requirement() -> str:
    """The torch release this interpreter has (its local build tag dropped), pinned."""
    return "torch==" + version("torch").split("+")[0]


def venv_python(venv: Path) -> Path:
    """The interpreter of the virtual environment `venv`."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def project(repo: Path, combination: Combination) -> str:
    """What pip installs for a repo: the project, with its `jax` extra when it has one."""
    return f"{repo}[jax]" if combination.jax else str(repo)


@dataclass
class ColdStart:
    """A new user's first minutes: each phase's seconds, the environment and the repo."""

    phases: dict[str, float]
    python: Path
    repo: Path
    pip: str
    tests: dict[str, Any]

    @property
    def total(self) -> float:
        return sum(self.phases.values())


def cold_start(template: Path, workdir: Path, combination: Combination) -> ColdStart:
    """Render, make a fresh virtual environment, install torch, install the repo with its test
    dependencies, run its tests: every phase timed as a whole process."""
    phases = {}
    phases["render (cookiecutter)"], _ = timed(cookiecutter_command(template, workdir / "render", combination))
    repo = only_child(workdir / "render")
    venv = workdir / "venv"
    phases["environment (virtualenv)"], _ = timed([sys.executable, "-m", "virtualenv", "--quiet", venv])
    python = venv_python(venv)
    pip = run([python, "-m", "pip", "--version"]).stdout.split()[1]  # untimed: a fact, not a phase
    index_url = torch_index_url()
    torch: Command = [python, *PIP_INSTALL, torch_requirement(), *(["--index-url", index_url] if index_url else [])]
    phases[f"install {torch_requirement()}"], _ = timed(torch)
    groups = ["--group", "test", "--group", "parity"]  # the harness from the template's commit
    install: Command = [python, *PIP_INSTALL, *groups, "--editable", project(repo, combination)]
    phases["install the repo (`--group test --group parity -e .`)"], _ = timed(install, cwd=repo)
    seconds, result = timed([python, *PYTEST], cwd=repo, check=False)
    phases["run its tests (pytest)"] = seconds
    return ColdStart(phases, python, repo, pip, pytest_outcome(result.returncode, result.stdout))


def pytest_outcome(returncode: int, stdout: str) -> dict[str, Any]:
    """Whether a pytest run passed, and its summary line (`12 passed, 2 deselected in 3.40s`)."""
    lines = [line.strip("= ") for line in stdout.strip().splitlines()]
    summary = lines[-1] if lines else ""
    slowest = [line for line in lines if DURATION_LINE.match(line)]
    return {"returncode": returncode, "passed": returncode == 0, "summary": summary, "slowest": slowest}


def time_suites(python: Path, repos: Iterable[tuple[Combination, Path]], times: int) -> dict[str, dict[str, Any]]:
    """The generated test suite's whole-process time per combination, each repo installed
    (editable, untimed) in the environment of `python` in turn, run `times` times (at least 2) as
    a researcher runs it: the first run with pytest's cache empty (JAX compiles everything), the
    later ones with what the first kept there (`.pytest_cache/d/jax`)."""
    results = {}
    for combination, repo in repos:
        run([python, *PIP_INSTALL, "--editable", project(repo, combination)], cwd=repo)
        shutil.rmtree(repo / ".pytest_cache", ignore_errors=True)
        samples, outcomes = [], []
        for _ in range(max(times, 2)):
            seconds, result = timed([python, "-m", "pytest", "-q", *SLOWEST], cwd=repo, check=False)
            samples.append(seconds)
            outcomes.append(pytest_outcome(result.returncode, result.stdout))
        # The first failed run if any failed (a flaky suite is a red suite), else the last run.
        outcome = next((outcome for outcome in outcomes if not outcome["passed"]), outcomes[-1])
        results[combination.id] = {
            "first_seconds": samples[0],
            "seconds": Stats.of(samples[1:]).as_dict(),
            **outcome,
        }
    return results
