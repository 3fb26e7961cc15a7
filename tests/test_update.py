"""`copier update` brings a new release's conventions into generated repos and keeps the user's work.

A template repository is tagged v1.0.0; repos are generated from it with both engines in every
combination and changed the way researchers change them; the template then changes conventions in
v2.0.0, and `copier update --defaults` runs in each repo (tests/updating.py, fixtures in conftest.py).
Updates that change an answer are in test_update_answers.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.render import (
    BIN,
    COMBINATIONS,
    Combination,
    Render,
    commit_all,
    generate,
    git,
    harness_pin,
    harness_requirement,
    run,
    snapshot_template,
)
from tests.test_pre_commit import offline_prefix
from tests.updating import (
    CONFLICTING_EDITS,
    CONVENTION_CHANGES,
    ENGINES,
    WORKFLOW,
    conflicted_files,
    copier_update,
    user_changes,
)

# The conflict check as the README and CI run it: plain Python, imports nothing of the repo.
CONFLICT_CHECK = "parity conflicts"
# CI's step before it: the tools alone (no torch), at the version pyproject.toml pins, read as text.
INSTALL_TOOLS = 'python -m pip install --no-deps "$(grep -o -m 1 \'parity @ git+[^"]*\' pyproject.toml)"'

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("engine", ENGINES)
def test_conventions_arrive_and_user_work_stays(
    v2: dict[str, Path], template_v1: Path, engine: str, combination: Combination
) -> None:
    repo = v2[f"{engine}-{combination.id}"]
    copier_update(repo)

    answers = yaml.safe_load((repo / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["_commit"] == "v2.0.0"
    assert harness_requirement(repo) == harness_pin(template_v1, "v2.0.0"), "the harness stayed at v1.0.0"
    missing = [change.path for change in CONVENTION_CHANGES if not change.applied(repo)]
    assert not missing, f"conventions that did not arrive: {missing}"
    lost = [change.path for change in user_changes(combination) if not change.applied(repo)]
    assert not lost, f"user changes lost: {lost}"
    assert (repo / "tests" / "test_kernel_density.py").is_file(), "the scaffolded algorithm's tests are gone"
    assert not conflicted_files(repo)
    assert not list(repo.rglob("*.rej"))


@pytest.mark.parametrize("combination_id", ["single", "split-jax"])
def test_a_deleted_worked_example_stays_deleted(v2: dict[str, Path], combination_id: str) -> None:
    """copier recreates a missing `_skip_if_exists` file; the worked examples' implementations are
    left out of updates instead, so the user's deletion holds (JAX port included)."""
    repo = v2[f"copier-{combination_id}-deleted"]
    copier_update(repo)

    assert all(change.applied(repo) for change in CONVENTION_CHANGES), "v2.0.0 did not arrive"
    found = [path for path in repo.rglob("*softmax*") if "log_softmax" not in path.as_posix()]
    assert not found, "the update brought the deleted example back"
    assert not conflicted_files(repo)


def test_conflicts_are_reported_by_name_without_loading_the_files(
    v2: dict[str, Path], template_v1: Path, rendered: Render
) -> None:
    """A real conflict in noxfile.py, pyproject.toml, the pre-commit config, a test helper and the
    CI workflow: the check that reads them as text names each one, run as the README says, as CI
    runs it (before nox, which cannot load such a noxfile.py) and as pre-commit runs it, offline."""
    repo = v2["conflict"]
    copier_update(repo)  # copier exits 0 on a conflict
    conflicted = sorted(edit.path for edit in CONFLICTING_EDITS)
    assert conflicted_files(repo) == conflicted
    loaded = subprocess.run([BIN / "nox", "-l"], cwd=repo, capture_output=True, text=True, check=False)
    assert "SyntaxError" in loaded.stderr, "nox loaded a noxfile.py with conflict markers"

    # The README's command, and CI's first step in every job (from a fresh render: the repo's own
    # workflow is among the conflicted files), with a Python that imports nothing of the repo.
    workflow = yaml.safe_load((rendered("copier", COMBINATIONS[0]) / WORKFLOW).read_text(encoding="utf-8"))
    for job in workflow["jobs"].values():
        commands = [step["run"] for step in job["steps"] if "run" in step]
        assert commands[:2] == [INSTALL_TOOLS, CONFLICT_CHECK], commands
    # The pin, read from a conflicted pyproject.toml as text, and the tools without the repo.
    pin = subprocess.run(
        ["bash", "-c", "echo " + INSTALL_TOOLS.partition("--no-deps ")[2]], cwd=repo, capture_output=True
    )
    assert pin.stdout.decode().strip() in {harness_pin(template_v1, "v1.0.0"), harness_pin(template_v1, "v2.0.0")}
    found = subprocess.run(
        [sys.executable, "-I", "-m", "parity_tools", "conflicts"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"in: {', '.join(conflicted)}." in found.stdout
    assert "noxfile.py:" in found.stdout  # with the line of each marker

    # pre-commit, with the network cut: it cannot read its own conflicted config, and says which
    # file; with that one resolved, the hook names the others.
    refused = offline_pre_commit(repo, "run", "unresolved-conflicts", "--all-files")
    assert refused.returncode != 0
    assert "InvalidConfigError" in refused.stdout + refused.stderr
    assert ".pre-commit-config.yaml" in refused.stdout + refused.stderr
    git(repo, "checkout", "HEAD", "--", ".pre-commit-config.yaml")  # resolved: the user's version
    refused = offline_pre_commit(repo, "run", "unresolved-conflicts", "--all-files")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"in: {', '.join(name for name in conflicted if name != '.pre-commit-config.yaml')}." in refused.stdout
    git(repo, "checkout", "HEAD", "--", *conflicted)  # all resolved: the user keeps their versions
    assert offline_pre_commit(repo, "run", "unresolved-conflicts", "--all-files").returncode == 0


def offline_pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real pre-commit, with the repo's own config, in a network namespace with no interface,
    the development environment active (its tools first on PATH), as the README says to commit."""
    command = [*offline_prefix(), str(BIN / "pre-commit"), *args]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False, env=env)


def test_a_dirty_repo_is_refused_without_losing_work(v2: dict[str, Path]) -> None:
    repo = v2["copier-single"]
    readme = repo / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nUnsaved thoughts.\n", encoding="utf-8")
    result = copier_update(repo, check=False)
    assert result.returncode != 0
    assert "dirty" in result.stderr
    assert readme.read_text(encoding="utf-8").endswith("Unsaved thoughts.\n")
    git(repo, "checkout", "--", "README.md")


def test_a_repo_without_answers_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("research\n", encoding="utf-8")
    commit_all(tmp_path, "a repo not made from the template", init=True)
    result = copier_update(tmp_path, check=False)
    assert result.returncode != 0
    assert (tmp_path / "notes.md").read_text(encoding="utf-8") == "research\n"


def test_a_template_without_tags_is_explained(tmp_path: Path) -> None:
    """copier falls back to the template's latest commit and says why; README.md says how to tag."""
    template = snapshot_template(tmp_path / "template", tag=None)
    repo = generate(template, "copier", tmp_path / "out", COMBINATIONS[0])
    git(template, "commit", "-q", "--allow-empty", "-m", "unreleased work")
    result = run([BIN / "copier", "update", "--defaults"], cwd=repo)
    assert "No git tags found in template" in result.stderr
