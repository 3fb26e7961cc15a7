"""cruft, the update tool many cookiecutter users run: `cruft create` makes the repo cookiecutter
makes (plus `.cruft.json`), and `cruft check` / `cruft update` bring a new template release into it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.render import (
    BIN,
    COMBINATIONS,
    Combination,
    commit_all,
    git,
    harness_pin,
    harness_requirement,
    only_child,
    render_cookiecutter,
    run,
    snapshot_template,
    tree,
)

pytestmark = pytest.mark.slow
WORKFLOW = ".github/workflows/ci.yml"


def cruft_create(template: Path, out: Path, combination: Combination) -> Path:
    out.mkdir(parents=True)
    extra = json.dumps(combination.answers)
    run([BIN / "cruft", "create", "--no-input", "--extra-context", extra, "--output-dir", out, template])
    return only_child(out)


def cruft(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run cruft in `repo`, as from a shell there (which sets $PWD)."""
    return subprocess.run(
        [str(BIN / "cruft"), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, PWD=str(repo)),
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path} no longer contains {old!r}: update this test"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("combination", [COMBINATIONS[0], COMBINATIONS[-1]], ids=lambda c: c.id)
def test_cruft_create_makes_cookiecutter_s_repo(template_repo: Path, combination: Combination, tmp_path: Path) -> None:
    made_by_cruft = tree(cruft_create(template_repo, tmp_path / "cruft", combination))
    render_cookiecutter(template_repo, tmp_path / "cookiecutter", combination.answers, typed=False)
    made_by_cookiecutter = tree(only_child(tmp_path / "cookiecutter"))

    cruft_state = made_by_cruft.pop(".cruft.json")
    assert made_by_cruft == made_by_cookiecutter
    assert cruft_state is not None
    assert json.loads(cruft_state)["template"] == str(template_repo)


def test_cruft_check_and_update_bring_a_new_release(tmp_path: Path) -> None:
    template = snapshot_template(tmp_path / "template", tag="v1.0.0")
    repo = cruft_create(template, tmp_path / "out", Combination("single", jax=False))
    commit_all(repo, "generated with cruft", init=True)
    assert cruft(repo, "check").returncode == 0
    assert harness_requirement(repo) == harness_pin(template, "v1.0.0")
    edit(repo / "README.md", "\n## ", "\n## Results\n\nOur numbers beat the baseline.\n\n## ")
    numpy_file = repo / "src" / "my_research_project" / "softmax.py"
    edit(numpy_file, "def _softmax_numpy(", "# Checked against eq. (3) of the paper.\ndef _softmax_numpy(")
    commit_all(repo, "research")

    edit(template / "template" / WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-24.04  # v2: pinned image")
    commit_all(template, "v2: new conventions")
    git(template, "tag", "v2.0.0")
    stale = cruft(repo, "check")
    assert stale.returncode != 0
    assert "out of date" in stale.stdout + stale.stderr

    updated = cruft(repo, "update", "--skip-apply-ask")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert "ubuntu-24.04  # v2: pinned image" in (repo / WORKFLOW).read_text(encoding="utf-8")
    assert "Our numbers beat the baseline." in (repo / "README.md").read_text(encoding="utf-8")
    assert "# Checked against eq. (3) of the paper." in numpy_file.read_text(encoding="utf-8")
    assert not list(repo.rglob("*.rej"))
    # The answers file follows too, so copier can take over the updates from here.
    answers = yaml.safe_load((repo / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["_commit"] == "v2.0.0"
    assert answers["_src_path"] == str(template)
    assert harness_requirement(repo) == harness_pin(template, "v2.0.0"), "the harness did not move"
    commit_all(repo, "update from the template")
    assert cruft(repo, "check").returncode == 0


@pytest.mark.parametrize(
    ("combination", "change", "refusal"),
    [
        (
            Combination("single", jax=False),
            {"layout": "split"},
            "This repo has the single layout and an update cannot change it",
        ),
        (
            Combination("split", jax=False),
            {"layout": "single"},
            "This repo has the split layout and an update cannot change it",
        ),
        (Combination("split", jax=True), {"jax": False}, "This repo has JAX and an update cannot switch it off"),
    ],
    ids=["single-to-split", "split-to-single", "jax-off"],
)
def test_cruft_update_refuses_a_destructive_answer_change(
    combination: Combination, change: dict[str, object], refusal: str, tmp_path: Path
) -> None:
    """`--variables-to-update` with the other layout, or without JAX, would delete files, edits
    and all: the hook refuses with copier's message, and the repo stays as it was."""
    template = snapshot_template(tmp_path / "template", tag="v1.0.0")
    repo = cruft_create(template, tmp_path / "out", combination)
    commit_all(repo, "generated with cruft", init=True)
    numpy_file = "softmax.py" if combination.layout == "single" else "softmax/numpy_impl.py"
    edit(repo / "src" / "my_research_project" / numpy_file, "def _softmax_numpy(", "# eq. (3)\ndef _softmax_numpy(")
    commit_all(repo, "research")
    edit(template / "template" / WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-24.04")
    commit_all(template, "v2")
    git(template, "tag", "v2.0.0")
    before = tree(repo)

    refused = cruft(repo, "update", "--skip-apply-ask", "--variables-to-update", json.dumps(change))
    assert refused.returncode != 0
    assert refusal in refused.stderr
    assert "--variables-to-update" in refused.stderr
    assert tree(repo) == before
    assert not git(repo, "status", "--porcelain")
    assert cruft(repo, "update", "--skip-apply-ask").returncode == 0  # keeping the answers still updates
