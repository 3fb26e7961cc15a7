"""Render the template with the real cookiecutter and copier command-line tools."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from _pytest.mark import ParameterSet

ROOT = Path(__file__).resolve().parents[1]
COOKIECUTTER_JSON = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
COPIER_YML = yaml.safe_load((ROOT / "copier.yml").read_text(encoding="utf-8"))
# Questions in the order both engines ask them (cookiecutter's private `_x` keys are not asked).
QUESTIONS = [key for key in COOKIECUTTER_JSON if not key.startswith("_")]
BIN = Path(sys.executable).parent
#: The `parity` command of the generated repos' tools (parity_tools), run by this interpreter.
TOOLS = (sys.executable, "-m", "parity_tools")


@dataclass(frozen=True)
class Combination:
    """One choice of the options that change which files a repo gets."""

    layout: str
    jax: bool
    triton: bool = False  # answered only where true: earlier releases do not ask it

    @property
    def id(self) -> str:
        return self.layout + ("-jax" if self.jax else "") + ("-triton" if self.triton else "")

    @property
    def answers(self) -> dict[str, Any]:
        return {"layout": self.layout, "jax": self.jax} | ({"triton": True} if self.triton else {})


# Both layouts and both JAX answers with and without Triton, in four renders (the first and the last
# without it, as some tests want the fewest and the most files of an earlier release's questions);
# the noxfile's generated sessions render all four with Triton.
COMBINATIONS = [
    Combination("single", jax=False),
    Combination("single", jax=True, triton=True),
    Combination("split", jax=False, triton=True),
    Combination("split", jax=True),
]


def quick_share(values: Sequence[Any], quick: Sequence[Any], ids: Callable[[Any], str] = str) -> list[ParameterSet]:
    """`values` as a test's parameters: those in `quick` in the default `nox`, the others marked
    `proof` (`nox -s proofs`, which CI runs too)."""
    return [
        pytest.param(value, marks=() if value in quick else (pytest.mark.proof,), id=ids(value)) for value in values
    ]


def most_files_first() -> list[ParameterSet]:
    """COMBINATIONS as a test's `combination`: the one with the most files (split, JAX) in the
    default `nox`, the others marked `proof`."""
    return quick_share(COMBINATIONS, (COMBINATIONS[-1],), ids=lambda combination: combination.id)


# The `rendered` fixture: rendered(engine, combination) -> the generated repo.
Render = Callable[[str, Combination], Path]


def run(args: Sequence[str | Path], cwd: Path | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure, fail with its whole output."""
    result = subprocess.run([str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        raise AssertionError(
            f"`{' '.join(map(str, args))}` exited {result.returncode}\n"
            f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )
    return result


def git(repo: Path, *args: str) -> str:
    return run(["git", "-C", repo, *args]).stdout.strip()


def snapshot_template(dest: Path, tag: str | None = "v0.1.0") -> Path:
    """Copy the working tree of this repo (tracked and untracked, not ignored) into a fresh git
    repository tagged `tag`, as copier needs a tagged template and cookiecutter records the tag."""
    files = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, files):
        source, target = ROOT / name, dest / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree but not yet committed
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    commit_all(dest, "template snapshot", init=True)
    if tag:
        git(dest, "tag", tag)
    return dest


def commit_all(repo: Path, message: str, init: bool = False) -> None:
    if init:
        git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=Test", "-c", "user.email=test@example.org", "commit", "-q", "-m", message)


def cookiecutter_typed_input(answers: Mapping[str, Any]) -> str:
    """The lines a user types at cookiecutter's prompts; an empty line keeps the default."""
    lines = []
    for key in QUESTIONS:
        default = COOKIECUTTER_JSON[key]
        if key not in answers:
            lines.append("")
        elif isinstance(default, list):
            lines.append(str(default.index(answers[key]) + 1))
        elif isinstance(default, bool):
            lines.append("y" if answers[key] else "n")
        else:
            lines.append(str(answers[key]))
    return "\n".join(lines) + "\n"


def render_cookiecutter(
    template: Path, output_dir: Path, answers: Mapping[str, Any], typed: bool = True, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run cookiecutter. `typed` answers its prompts as a user would (free text arrives as typed);
    otherwise the answers go on the command line with --no-input (cookiecutter renders those as
    Jinja, so keep them plain)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    command: list[str | Path]
    if typed:
        command = [BIN / "cookiecutter", "-o", output_dir, template]
        stdin = cookiecutter_typed_input(answers)
    else:
        values = [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in answers.items()]
        command = [BIN / "cookiecutter", "--no-input", "-o", output_dir, template, *values]
        stdin = ""
    return (run if check else _run_unchecked)(command, input=stdin)


def render_copier(
    template: Path, dest: Path, answers: Mapping[str, Any], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `copier copy --defaults`, the answers in a data file so free text arrives verbatim."""
    with tempfile.TemporaryDirectory() as scratch:
        data_file = Path(scratch, "answers.yml")
        data_file.write_text(yaml.safe_dump(dict(answers), allow_unicode=True), encoding="utf-8")
        command: list[str | Path] = [BIN / "copier", "copy", "--quiet", "--defaults", "--data-file", data_file]
        command += [template, dest]
        return (run if check else _run_unchecked)(command)


def _run_unchecked(args: Sequence[str | Path], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(arg) for arg in args], capture_output=True, text=True, check=False, **kwargs)


def only_child(folder: Path) -> Path:
    (child,) = folder.iterdir()
    return child


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under root, by relative path."""
    return {
        path.relative_to(root).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
        if ".git" not in path.relative_to(root).parts
    }


def generate(template: Path, engine: str, workspace: Path, combination: Combination = COMBINATIONS[0]) -> Path:
    """A repo as its user keeps it: generated by `engine` into `workspace`, and committed."""
    if engine == "cookiecutter":
        render_cookiecutter(template, workspace, combination.answers)
        repo = only_child(workspace)
    else:
        repo = workspace / "my-research-project"
        render_copier(template, repo, combination.answers)
    commit_all(repo, "generated from the template", init=True)
    return repo


# Reading a generated repo --------------------------------------------------------------------------


def fresh_git_repo(rendered_repo: Path, dest: Path) -> Path:
    """A copy of a generated repo, as a user has it after `git init && git add -A`."""
    shutil.copytree(rendered_repo, dest, symlinks=True)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    return dest


def read_pyproject(repo: Path) -> dict[str, Any]:
    return tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))


def harness_requirement(repo: Path) -> str:
    """The parity harness as `repo` requires it: the one entry of its `parity` dependency group."""
    (entry,) = read_pyproject(repo)["dependency-groups"]["parity"]
    return str(entry)


def harness_pin(template: Path, ref: str = "HEAD") -> str:
    """What a repo rendered from the local `template` at `ref` requires: the harness's folder in
    that repository, at the commit's full hash."""
    return f"parity @ git+file://{template}@{git(template, 'rev-parse', ref)}#subdirectory=packages/parity"


def workflow_files(repo: Path) -> list[Path]:
    workflows = repo / ".github" / "workflows"
    return sorted([*workflows.glob("*.yml"), *workflows.glob("*.yaml")])
