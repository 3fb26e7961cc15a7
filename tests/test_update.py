"""`copier update` brings a new release's conventions into generated repos and keeps the user's work.

A template repository is tagged v1.0.0; repos are generated from it with both engines in every
combination and changed the way researchers change them; the template then changes conventions in
v2.0.0, and `copier update --defaults` runs in each repo (tests/updating.py, fixtures in conftest.py).
Updates that change an answer are in test_update_answers.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.render import BIN, COMBINATIONS, Combination, commit_all, generate, git, run, snapshot_template
from tests.updating import (
    CONVENTION_CHANGES,
    ENGINES,
    WORKFLOW,
    conflicted_files,
    copier_update,
    user_changes,
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("engine", ENGINES)
def test_conventions_arrive_and_user_work_stays(v2: dict[str, Path], engine: str, combination: Combination) -> None:
    repo = v2[f"{engine}-{combination.id}"]
    copier_update(repo)

    answers = yaml.safe_load((repo / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["_commit"] == "v2.0.0"
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
    assert not list(repo.rglob("*softmax*")), "the update brought the deleted example back"
    assert not conflicted_files(repo)


def test_a_conflicting_edit_leaves_markers_that_pre_commit_refuses(v2: dict[str, Path], tmp_path: Path) -> None:
    repo = v2["conflict"]
    copier_update(repo)  # copier exits 0 on a conflict

    assert conflicted_files(repo) == [WORKFLOW]
    refused = run_local_pre_commit_hooks(repo, tmp_path, "--all-files")
    assert refused.returncode != 0
    assert WORKFLOW in refused.stdout
    git(repo, "checkout", "HEAD", "--", WORKFLOW)  # resolved: the user keeps their version
    assert run_local_pre_commit_hooks(repo, tmp_path, "--all-files").returncode == 0


def run_local_pre_commit_hooks(repo: Path, scratch: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real pre-commit, with the repo's own `local` hooks (the others would need the network
    to fetch their repositories)."""
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    local_hooks = [entry for entry in config["repos"] if entry["repo"] == "local"]
    guards = [
        dict(entry, hooks=[hook for hook in entry["hooks"] if hook["language"] != "system"]) for entry in local_hooks
    ]
    local_config = scratch / "local-hooks.yaml"
    local_config.write_text(yaml.safe_dump({"repos": guards}), encoding="utf-8")
    return subprocess.run(
        [str(BIN / "pre-commit"), "run", "--config", str(local_config), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


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
