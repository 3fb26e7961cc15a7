"""`copier update` brings a new release's conventions into generated repos and keeps the user's work.

A template repository is tagged v1.0.0; repos are generated from it with both engines in every
combination and changed the way researchers change them; the template then changes conventions in
v2.0.0, and `copier update --defaults` runs in each repo.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest
import yaml

from tests.render import (
    BIN,
    COMBINATIONS,
    COPIER_YML,
    Combination,
    commit_all,
    generate,
    git,
    run,
    snapshot_template,
    tree,
)

pytestmark = pytest.mark.slow
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


# v2.0.0 of the template (paths inside template/): a lint rule, the CI workflow, a nox session and
# a test helper change.
CONVENTION_CHANGES = [
    Edit("pyproject.toml", "[tool.ruff.lint]\n", "[tool.ruff.lint]\n# v2: stricter complexity limits\n"),
    Edit(".github/workflows/ci.yml", "runs-on: ubuntu-latest", "runs-on: ubuntu-24.04  # v2: pinned image"),
    Edit(
        "noxfile.py",
        "def lint(session: nox.Session) -> None:\n",
        "def lint(session: nox.Session) -> None:  # v2\n",
    ),
    Edit("tests/parity.py", "\nimport ", "\n# v2: clearer failure messages\nimport "),
]
WORKFLOW = ".github/workflows/ci.yml"


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
    run([BIN / "python", "scripts/new_algorithm.py", "kernel_density"], cwd=repo)
    for change in user_changes(combination):
        change.apply(repo)
    commit_all(repo, "research")


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


@pytest.fixture(scope="module")
def template_v1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return snapshot_template(tmp_path_factory.mktemp("template"), tag="v1.0.0")


@pytest.fixture(scope="module")
def repos(template_v1: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every repo the tests update, generated from v1.0.0 before v2.0.0 exists."""
    made = {}
    for engine in ENGINES:
        for combination in COMBINATIONS:
            repo = generate(template_v1, engine, tmp_path_factory.mktemp(f"{engine}-{combination.id}"), combination)
            work_on(repo, combination)
            made[f"{engine}-{combination.id}"] = repo
    for engine, layout in [("copier", "split"), ("cookiecutter", "single")]:
        combination = Combination(layout, jax=False)
        made[f"{engine}-{layout}-to-jax"] = generate(
            template_v1, engine, tmp_path_factory.mktemp(f"{engine}-{layout}-to-jax"), combination
        )
    for engine in ENGINES:
        for layout in ("single", "split"):
            combination = Combination(layout, jax=False)
            repo = generate(template_v1, engine, tmp_path_factory.mktemp(f"{engine}-{layout}-relayout"), combination)
            work_on(repo, combination)
            made[f"{engine}-{layout}-relayout"] = repo
    conflicting = generate(template_v1, "copier", tmp_path_factory.mktemp("conflict"), COMBINATIONS[0])
    Edit(WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-22.04  # our cluster's image").apply(conflicting)
    commit_all(conflicting, "pin the runner image")
    made["conflict"] = conflicting
    return made


@pytest.fixture(scope="module")
def v2(template_v1: Path, repos: dict[str, Path]) -> dict[str, Path]:
    """The template after its v2.0.0 release; returns the repos made from v1.0.0."""
    for change in CONVENTION_CHANGES:
        change.apply(template_v1 / "template")
    commit_all(template_v1, "v2: new conventions")
    git(template_v1, "tag", "v2.0.0")
    return repos


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


def research_files(repo: Path) -> dict[str, bytes]:
    """The files copier.yml marks as the user's (`_skip_if_exists`), with their content."""
    return {
        path.relative_to(repo).as_posix(): path.read_bytes()
        for path in repo.rglob("*")
        if path.is_file() and any(fnmatch(path.relative_to(repo).as_posix(), pattern) for pattern in RESEARCH)
    }


RESEARCH = COPIER_YML["_skip_if_exists"]


@pytest.mark.parametrize("key", ["copier-split-to-jax", "cookiecutter-single-to-jax"])
def test_changing_an_answer_adds_the_template_s_jax_pieces(v2: dict[str, Path], key: str) -> None:
    repo = v2[key]
    research = research_files(repo)
    assert research, "no research files found: check _skip_if_exists in copier.yml"
    copier_update(repo, "--data", "jax=true")

    answers = yaml.safe_load((repo / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["jax"] is True
    extras = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "jax" in extras
    assert "is_jax_array" in (repo / "src" / PACKAGE / "_dispatch.py").read_text(encoding="utf-8")
    changed = {name for name, content in research.items() if (repo / name).read_bytes() != content}
    assert not changed, f"research code changed: {changed}"
    if "split" in key:  # a new backend file per algorithm, and the dispatch that calls it
        assert (repo / "src" / PACKAGE / "softmax" / "jax_impl.py").is_file()
        assert "_softmax_jax" in (repo / "src" / PACKAGE / "softmax" / "api.py").read_text(encoding="utf-8")
    assert not conflicted_files(repo)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("layout", ["single", "split"])
def test_a_layout_change_is_refused_before_anything_is_written(v2: dict[str, Path], engine: str, layout: str) -> None:
    """Changing the layout would delete the old layout's files, edits and all: copier must stop
    before it writes, and say how to change the layout safely."""
    repo = v2[f"{engine}-{layout}-relayout"]
    other = "split" if layout == "single" else "single"
    before = tree(repo)
    result = copier_update(repo, "--data", f"layout={other}", check=False)

    assert result.returncode != 0
    assert f"This repo has the {layout} layout and an update cannot change it" in result.stderr
    assert f"Keep layout={layout}" in result.stderr
    assert 'README.md, "Change the layout"' in result.stderr
    assert tree(repo) == before, "the refused update changed files"
    assert not git(repo, "status", "--porcelain")
    copier_update(repo)  # the same repo still updates when the layout stays
    assert all(change.applied(repo) for change in user_changes(Combination(layout, jax=False)))


def test_the_oldest_copier_refuses_a_layout_change_too(template_v1: Path, tmp_path: Path) -> None:
    """The refusal relies on `_external_data` and `_folder_name`: copier.yml's minimum has both."""
    venv = tmp_path / "oldest-copier"
    run([sys.executable, "-m", "venv", venv])
    run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"copier=={COPIER_YML['_min_copier_version']}"])
    repo = generate(template_v1, "copier", tmp_path / "out", Combination("split", jax=False))
    before = tree(repo)
    command = [str(venv / "bin" / "copier"), "update", "--defaults", "--quiet", "--data", "layout=single"]
    result = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "This repo has the split layout and an update cannot change it" in result.stderr
    assert tree(repo) == before


@pytest.mark.parametrize("key", ["copier-split-to-jax", "cookiecutter-single-to-jax"])
def test_jax_switched_on_later_keeps_the_suite_green(v2: dict[str, Path], key: str) -> None:
    """In the single layout the worked examples stay the user's, without JAX: their JAX tests
    report "not implemented yet"; in the split layout the JAX ports arrive and pass."""
    repo = v2[key]
    switch_jax_on(repo)
    result = run_generated_tests(repo, "tests/test_softmax.py", "tests/test_cross_entropy.py")

    if "single" in key:
        assert "softmax() has no JAX implementation yet: add `_softmax_jax`" in result.stdout
        assert "cross_entropy() has no JAX implementation yet: add `_cross_entropy_jax`" in result.stdout
        assert re.search(r"\d+ xfailed", result.stdout)
    else:
        assert "xfailed" not in result.stdout
    assert re.search(r"\d+ passed", result.stdout)


def test_a_missing_jax_branch_and_mixed_backends_are_told_apart(v2: dict[str, Path]) -> None:
    repo = v2["cookiecutter-single-to-jax"]
    switch_jax_on(repo)
    script = (
        "import jax.numpy as jnp, numpy as np\n"
        f"from {PACKAGE} import cross_entropy\n"
        "labels = jnp.zeros(2, dtype=int)\n"
        "for logits in [jnp.zeros((2, 3)), np.zeros((2, 3))]:\n"
        "    try:\n"
        "        cross_entropy(logits, labels)\n"
        "    except TypeError as error:\n"
        "        print(type(error).__name__, error)\n"
    )
    output = run([BIN / "python", "-c", script], cwd=repo, env=dict(os.environ, PYTHONPATH="src")).stdout.splitlines()
    assert output[0].startswith("MissingBackendError cross_entropy() has no JAX implementation yet")
    assert output[1] == (
        "TypeError cross_entropy() got operands from different backends (logits is numpy.ndarray, "
        "labels is jax.Array); convert them to one backend"
    )


def switch_jax_on(repo: Path) -> None:
    """`copier update --data jax=true`, unless an earlier test did it already."""
    if "jax: false" in (repo / ".copier-answers.yml").read_text(encoding="utf-8"):
        copier_update(repo, "--data", "jax=true")


def run_generated_tests(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The generated repo's own suite, from its sources, in this environment."""
    command: list[str | Path] = [BIN / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rx", *args]
    return run(command, cwd=repo, env=dict(os.environ, PYTHONPATH="src"))


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
