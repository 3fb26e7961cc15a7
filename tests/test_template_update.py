"""`nox -s template_update` in a generated repo: the template's new release on a branch of its own,
committed, with the pull request's text; conflicts committed as copier left them, in a draft; the
linters run over every file, and what they found in the pull request (a draft too).

A template repository is tagged v1.0.0, repos are made from it by both engines, then v2.0.0 changes
the CI workflow and .editorconfig and brings a lint rule (no TODO comments). The session runs as
the weekly workflow runs it (`GITHUB_OUTPUT` set), with the copier and ruff of this environment
(`--no-venv --no-install`); its code is `parity update` (parity_tools/update.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.render import (
    BIN,
    TOOLS,
    commit_all,
    generate,
    git,
    snapshot_template,
)
from tests.wheelhouse import PARITY

pytestmark = pytest.mark.slow
ENGINES = ["cookiecutter", "copier"]
WORKFLOW = ".github/workflows/ci.yml"
# A user's script that breaks the rule v2.0.0 brings, in a file the update does not touch.
TODO_FILE, TODO_LINE = "scripts/explore.py", "# TODO: try a larger batch\n"
RESULTS = ["update", "branch", "title", "body_file", "draft"]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path} no longer contains {old!r}: update this test"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def nox(repo: Path, session: str, scratch: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run a session of the repo's noxfile; its result, and what it wrote to GITHUB_OUTPUT."""
    output = scratch / f"github-output-{session}"
    output.unlink(missing_ok=True)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", GITHUB_OUTPUT=str(output))
    result = subprocess.run(
        [BIN / "nox", "--no-venv", "--no-install", "-s", session],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    lines = output.read_text(encoding="utf-8").splitlines() if output.exists() else []
    return result, dict(line.split("=", 1) for line in lines)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return snapshot_template(tmp_path_factory.mktemp("template"), tag="v1.0.0")


@pytest.fixture(scope="module")
def repos(template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per engine: a repo whose README the user edited, and one where the user also changed the
    line of the CI workflow that v2.0.0 changes (a conflict); and one with a TODO comment."""
    made = {}
    todo = generate(template, "copier", tmp_path_factory.mktemp("copier-todo"))
    (todo / TODO_FILE).write_text(TODO_LINE, encoding="utf-8")
    commit_all(todo, "explore")
    made["copier-todo"] = todo
    for engine in ENGINES:
        for kind in ("clean", "conflict"):
            repo = generate(template, engine, tmp_path_factory.mktemp(f"{engine}-{kind}"))
            edit(repo / "README.md", "\n## ", "\n## Results\n\nOur numbers beat the baseline.\n\n## ")
            if kind == "conflict":
                edit(repo / WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-22.04  # our cluster's image")
            commit_all(repo, "research")
            made[f"{engine}-{kind}"] = repo
    return made


@pytest.fixture(scope="module")
def v2(template: Path, repos: dict[str, Path]) -> dict[str, Path]:
    edit(template / "template" / WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-24.04  # v2: pinned image")
    edit(template / "template" / ".editorconfig", "\n", "\n# v2: one more convention\n")
    rule = '"YTT",  # sys.version checks\n'
    edit(template / "template" / "pyproject.toml", rule, rule + '  "FIX002",  # v2: TODOs in issues\n')
    commit_all(template, "v2: new conventions")
    git(template, "tag", "v2.0.0")
    return repos


@pytest.mark.parametrize("engine", ENGINES)
def test_an_up_to_date_repo_is_left_alone(v2: dict[str, Path], template: Path, engine: str, tmp_path: Path) -> None:
    repo = generate(template, engine, tmp_path / "out")  # made from v2.0.0, the newest release
    head = git(repo, "rev-parse", "HEAD")
    result, outputs = nox(repo, "template_update", tmp_path)

    assert result.returncode == 0, result.stderr
    assert "Up to date: the template's newest release is 2.0.0." in result.stderr
    assert outputs == {"update": "false"}
    assert git(repo, "branch", "--show-current") == "main"
    assert git(repo, "rev-parse", "HEAD") == head
    assert not git(repo, "status", "--porcelain")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_new_release_arrives_on_its_own_branch(v2: dict[str, Path], engine: str, tmp_path: Path) -> None:
    repo = v2[f"{engine}-clean"]
    main = git(repo, "rev-parse", "main")
    result, outputs = nox(repo, "template_update", tmp_path)

    assert result.returncode == 0, result.stderr
    assert set(outputs) == set(RESULTS)
    assert outputs["update"] == "true"
    assert outputs["draft"] == "false"
    assert outputs["branch"] == "template-update/2.0.0" == git(repo, "branch", "--show-current")
    assert outputs["title"] == "Update from the template: 1.0.0 to 2.0.0" == git(repo, "log", "-1", "--format=%s")
    assert git(repo, "rev-parse", "main") == main, "the default branch moved"
    assert git(repo, "rev-parse", "HEAD~1") == main, "not one commit on top of the default branch"
    assert not git(repo, "status", "--porcelain"), "the update was not committed whole"
    assert "ubuntu-24.04  # v2: pinned image" in (repo / WORKFLOW).read_text(encoding="utf-8")
    assert "Our numbers beat the baseline." in (repo / "README.md").read_text(encoding="utf-8")
    # The pull request's text, on stdout and in the file the workflow hands to `gh`.
    body = Path(outputs["body_file"]).read_text(encoding="utf-8")
    assert result.stdout == f"{outputs['title']}\n\n{body}"
    assert f"- `{WORKFLOW}` (changed)" in body
    assert "- `.editorconfig` (changed)" in body
    assert "Draft" not in body
    assert "- `ruff check`: nothing found\n- `ruff format`: nothing found\n" in body
    assert yaml.safe_load((repo / ".copier-answers.yml").read_text(encoding="utf-8"))["_commit"] == "v2.0.0"
    lint, _ = nox(repo, "lint", tmp_path)
    assert "No conflict markers or .rej files in " in lint.stdout

    # The next scheduled run, from the default branch: the same branch, made afresh.
    git(repo, "switch", "main")
    again, outputs_again = nox(repo, "template_update", tmp_path)
    assert again.returncode == 0, again.stderr
    assert outputs_again["branch"] == "template-update/2.0.0" == git(repo, "branch", "--show-current")
    assert git(repo, "rev-parse", "HEAD~1") == main


@pytest.mark.parametrize("engine", ENGINES)
def test_conflicts_are_committed_unresolved_in_a_draft(v2: dict[str, Path], engine: str, tmp_path: Path) -> None:
    repo = v2[f"{engine}-conflict"]
    main = git(repo, "rev-parse", "main")
    result, outputs = nox(repo, "template_update", tmp_path)

    assert result.returncode == 0, result.stderr
    assert outputs["draft"] == "true"
    assert git(repo, "rev-parse", "main") == main
    assert not git(repo, "status", "--porcelain")
    committed = git(repo, "show", f"HEAD:{WORKFLOW}")
    assert re.search(r"^<{7} before updating\n.*ubuntu-22.04.*\n={7}\n.*ubuntu-24.04", committed, re.MULTILINE)
    body = Path(outputs["body_file"]).read_text(encoding="utf-8")
    conflicts = body.split("**Draft: copier could not merge these files.**", 1)[1]
    assert f"- `{WORKFLOW}`" in conflicts
    assert "`<<<<<<< before updating`" in conflicts
    assert "mark this pull" in conflicts
    # CI refuses the markers even where pre-commit is not installed.
    lint, _ = nox(repo, "lint", tmp_path)
    assert lint.returncode != 0
    assert f"Unresolved conflicts (from `copier update` or a merge) in: {WORKFLOW}." in lint.stdout


def test_the_linters_run_over_every_file(v2: dict[str, Path], tmp_path: Path) -> None:
    """v2.0.0's rule breaks a file the update does not touch, which no pre-commit hook would see:
    the pull request names it, as a draft, and says how to fix it."""
    repo = v2["copier-todo"]
    result, outputs = nox(repo, "template_update", tmp_path)

    assert result.returncode == 0, result.stderr
    assert outputs["draft"] == "true"
    assert "ruff check: Found 1 error." in result.stderr
    body = Path(outputs["body_file"]).read_text(encoding="utf-8")
    assert "copier could not merge" not in body
    assert "- `ruff check`: Found 1 error.\n- `ruff format`: nothing found\n" in body
    assert "**Draft: the linters found problems.**" in body
    assert f"{TODO_FILE}:1:3: FIX002 Line contains TODO" in body
    assert "(`ruff check --fix`, `ruff format`)" in body
    assert not git(repo, "status", "--porcelain"), "the linters changed a file"


def test_missing_tools_are_named(template: Path, tmp_path: Path) -> None:
    """The script run by hand where copier and ruff are not installed: refused before any branch."""
    repo = generate(template, "copier", tmp_path / "out")
    git_only = str(Path(shutil.which("git") or "git").parent)
    script = [*TOOLS, "update"]
    result = subprocess.run(script, cwd=repo, env={"PATH": git_only}, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "copier and ruff are not installed here: nox -s template_update installs them" in result.stderr
    assert git(repo, "branch", "--show-current") == "main"


def test_lint_refuses_a_rej_file(template: Path, tmp_path: Path) -> None:
    """`copier update --conflict rej` leaves the hunks it could not apply in .rej files."""
    repo = generate(template, "copier", tmp_path / "out")
    (repo / "pyproject.toml.rej").write_text("@@ -1 +1 @@\n-a\n+b\n", encoding="utf-8")
    lint, _ = nox(repo, "lint", tmp_path)
    assert lint.returncode != 0
    assert "Unresolved conflicts (from `copier update` or a merge) in: pyproject.toml.rej." in lint.stdout
    (repo / "pyproject.toml.rej").unlink()
    assert "No conflict markers or .rej files in " in nox(repo, "lint", tmp_path)[0].stdout


def test_a_dirty_repo_is_refused(template: Path, tmp_path: Path) -> None:
    repo = generate(template, "copier", tmp_path / "out")
    (repo / "notes.md").write_text("unsaved\n", encoding="utf-8")
    result, outputs = nox(repo, "template_update", tmp_path)
    assert result.returncode != 0
    assert "uncommitted changes: commit or stash them first" in result.stderr
    assert git(repo, "branch", "--show-current") == "main"
    assert (repo / "notes.md").read_text(encoding="utf-8") == "unsaved\n"
    assert not outputs


@pytest.mark.parametrize("engine", ENGINES)
def test_the_workflow_needs_no_secrets_and_little_permission(v2: dict[str, Path], engine: str) -> None:
    repo = v2[f"{engine}-clean"]
    text = (repo / ".github/workflows/template-update.yml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    assert set(workflow[True]) == {"schedule", "workflow_dispatch"}  # YAML 1.1 reads `on` as True
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "write", "pull-requests": "write", "actions": "write"}
    assert "nox -s template_update" in [step.get("run") for step in job["steps"]]
    assert "secrets." not in text
    dev = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]["dev"]
    assert any(re.fullmatch(r"copier==\d+\.\d+\.\d+", str(pin)) for pin in dev), "copier is not pinned"
    script = (PARITY / "src" / "parity_tools" / "update.py").read_text(encoding="utf-8")
    assert "--trust" not in script + text
    assert "--UNSAFE" not in script + text
