"""A generated repo's life between two releases of the template, shared by the `copier update` tests.

v1.0.0 is this working tree; repos are generated from it with both engines and changed the way
researchers change them (`work_on`); v2.0.0 then changes conventions (CONVENTION_CHANGES). The
fixtures that build these (`template_v1`, `repos`, `v2`) are in conftest.py, shared by
test_update.py and test_update_answers.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.render import BIN, Combination, commit_all, run

PACKAGE = "my_research_project"
ENGINES = ["cookiecutter", "copier"]
CONFLICT_MARKER = re.compile(r"^(<{7}|>{7}) (before|after) updating", re.MULTILINE)


@dataclass(frozen=True)
class Edit:
    """Replace `old` (which must be there) by `new` in one file."""

    path: str
    old: str
    new: str

    def apply(self, root: Path) -> None:
        file = root / self.path
        text = file.read_text(encoding="utf-8")
        assert self.old in text, f"{self.path} no longer contains {self.old!r}: update this test"
        file.write_text(text.replace(self.old, self.new, 1), encoding="utf-8")

    def applied(self, root: Path) -> bool:
        return self.new in (root / self.path).read_text(encoding="utf-8")


# v2.0.0 of the template (paths inside template/): a lint rule, the CI workflow, a nox session, the
# pre-commit hooks and the docs' settings change.
CONVENTION_CHANGES = [
    Edit("pyproject.toml", "[tool.ruff.lint]\n", "[tool.ruff.lint]\n# v2: stricter complexity limits\n"),
    Edit(".github/workflows/ci.yml", "runs-on: ubuntu-latest", "runs-on: ubuntu-24.04  # v2: pinned image"),
    Edit(
        "noxfile.py",
        "def lint(session: nox.Session) -> None:\n",
        "def lint(session: nox.Session) -> None:  # v2\n",
    ),
    Edit(".pre-commit-config.yaml", "repos:\n", "repos: # v2: hooks in a new order\n"),
    Edit("docs/conf.py", "\nimport ", "\n# v2: a clearer theme\nimport "),
]
WORKFLOW = ".github/workflows/ci.yml"
# A user's edits to the lines that v2.0.0 changes: `copier update` leaves conflict markers in each
# of these files (where nox, pip, ruff, pytest and pre-commit cannot even load them).
CONFLICTING_EDITS = [
    Edit(WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-22.04  # our cluster's image"),
    Edit(
        "noxfile.py", "def lint(session: nox.Session) -> None:\n", "def lint(session: nox.Session) -> None:  # ours\n"
    ),
    Edit("pyproject.toml", "[tool.ruff.lint]\n", "[tool.ruff.lint]\n# ours: the lab's own rules\n"),
    Edit(".pre-commit-config.yaml", "repos:\n", "repos: # ours: a hook of our own below\n"),
    Edit("docs/conf.py", "\nimport ", "\n# ours: the lab's theme\nimport "),
]


def user_changes(combination: Combination) -> list[Edit]:
    """What a researcher does to a repo in the weeks after generating it."""
    single = combination.layout == "single"
    numpy_file = f"src/{PACKAGE}/softmax.py" if single else f"src/{PACKAGE}/softmax/numpy_impl.py"
    return [
        Edit(numpy_file, "def _softmax_numpy(", "# Checked against eq. (3) of the paper.\ndef _softmax_numpy("),
        Edit("README.md", "\n## ", "\n## Results\n\nOur numbers beat the baseline.\n\n## "),
        Edit("pyproject.toml", "dependencies = [\n", 'dependencies = [\n  "scipy>=1.11",\n'),
    ]


def work_on(repo: Path, combination: Combination) -> None:
    """A new algorithm from the repo's scaffold, and edits to code, README and dependencies."""
    run([BIN / "python", "-m", "parity_tools", "new", "kernel_density"], cwd=repo)
    for change in user_changes(combination):
        change.apply(repo)
    commit_all(repo, "research")


def drop_softmax(repo: Path, combination: Combination) -> None:
    """What many researchers do first: delete a worked example, its tests, its page and its export."""
    module = repo / "src" / PACKAGE / ("softmax.py" if combination.layout == "single" else "softmax")
    if module.is_dir():
        shutil.rmtree(module)
    else:
        module.unlink()
    (repo / "tests" / "test_softmax.py").unlink()
    (repo / "docs" / "algorithms" / "softmax.md").unlink()
    Edit(f"src/{PACKAGE}/__init__.py", "from .softmax import softmax\n", "").apply(repo)
    Edit(f"src/{PACKAGE}/__init__.py", '"log_softmax", "softmax"', '"log_softmax"').apply(repo)
    commit_all(repo, "drop the softmax example")


def copier_update(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "copier"), "update", "--defaults", "--quiet", *args]
    if check:
        return run(command, cwd=repo)
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False)


def conflicted_files(repo: Path) -> list[str]:
    return sorted(
        path.relative_to(repo).as_posix()
        for path in repo.rglob("*")
        if path.is_file()
        and ".git" not in path.parts
        and CONFLICT_MARKER.search(path.read_text(encoding="utf-8", errors="ignore"))
    )
