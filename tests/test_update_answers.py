"""`copier update` with a changed answer: switching JAX or Triton on brings the template's pieces and
keeps the suite green; a layout change, a new package name or switching JAX off is refused before anything
is written (the layout change by the oldest supported copier too), and the updating guide's
rename steps work. The repos and the two template releases are those of test_update.py
(conftest.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
import yaml

from tests.render import BIN, COPIER_YML, Combination, commit_all, generate, git, quick_share, run, tree
from tests.updating import (
    CONVENTION_CHANGES,
    ENGINES,
    PACKAGE,
    Edit,
    conflicted_files,
    copier_update,
    user_changes,
    work_on,
)

pytestmark = pytest.mark.slow
RESEARCH = COPIER_YML["_skip_if_exists"]  # the files copier.yml leaves to the user


def research_files(repo: Path) -> dict[str, bytes]:
    """The files copier.yml marks as the user's (`_skip_if_exists`), with their content."""
    return {
        path.relative_to(repo).as_posix(): path.read_bytes()
        for path in repo.rglob("*")
        if path.is_file() and any(fnmatch(path.relative_to(repo).as_posix(), pattern) for pattern in RESEARCH)
    }


def switch_jax_on(repo: Path) -> None:
    """`copier update --data jax=true`, unless an earlier test did it already."""
    if "jax: false" in (repo / ".copier-answers.yml").read_text(encoding="utf-8"):
        copier_update(repo, "--data", "jax=true")


def run_generated_tests(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The generated repo's own suite, from its sources, in this environment."""
    command: list[str | Path] = [BIN / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rx", *args]
    return run(command, cwd=repo, env=dict(os.environ, PYTHONPATH="src"))


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


@pytest.mark.parametrize("key", ["copier-split-to-triton", "cookiecutter-single-to-triton"])
def test_triton_switched_on_later_brings_its_kernels_and_keeps_the_suite_green(v2: dict[str, Path], key: str) -> None:
    """The split layout's Triton port arrives and passes in the interpreter; in the single layout
    softmax.py stays the user's, so its Triton tests report "not implemented yet" until the user
    writes the port. The split repo's answers file predates the question, as a repo from an
    earlier release has no `triton` answer."""
    repo = v2[key]
    if "split" in key:
        answers_file = repo / ".copier-answers.yml"
        answers_file.write_text(re.sub(r"(?m)^triton: false\n", "", answers_file.read_text(encoding="utf-8")))
        commit_all(repo, "an answers file from before the triton question")
    research = research_files(repo)
    copier_update(repo, "--data", "triton=true")

    extras = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "triton" in extras
    assert "def triton_runs" in (repo / "src" / PACKAGE / "_dispatch.py").read_text(encoding="utf-8")
    kernels = "softmax/_triton_kernels.py" if "split" in key else "_softmax_triton_kernels.py"
    assert "def softmax_rows" in (repo / "src" / PACKAGE / kernels).read_text(encoding="utf-8")
    changed = {name for name, content in research.items() if (repo / name).read_bytes() != content}
    assert not changed, f"research code changed: {changed}"
    assert not conflicted_files(repo)
    result = run_generated_tests(repo, "tests/test_softmax.py")
    if "single" in key:
        assert "softmax has no triton implementation yet: write _softmax_triton" in result.stdout
        assert re.search(r"\d+ xfailed", result.stdout)
    else:
        assert "xfailed" not in result.stdout
    assert re.search(r"\d+ passed", result.stdout)
    commit_all(repo, "Triton on")
    copier_update(repo)  # the next update leaves the Triton files alone, and merges cleanly
    assert not conflicted_files(repo)
    assert not git(repo, "status", "--porcelain")


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
    assert 'docs/guide/updating.md, "Change the layout"' in result.stderr
    assert tree(repo) == before, "the refused update changed files"
    assert not git(repo, "status", "--porcelain")
    copier_update(repo)  # the same repo still updates when the layout stays
    assert all(change.applied(repo) for change in user_changes(Combination(layout, jax=False)))


@pytest.mark.parametrize("engine", quick_share(ENGINES, ["copier"]))  # cookiecutter's repos: `nox -s proofs`
@pytest.mark.parametrize(
    ("combination", "change", "refusal"),
    [
        (Combination("split", jax=True), "jax=false", "This repo has JAX and an update cannot switch it off"),
        (
            Combination("single", jax=False, triton=True),
            "triton=false",
            "This repo has Triton and an update cannot switch it off",
        ),
        (Combination("single", jax=False), "package_name=paper", "This repo's package is my_research_project"),
    ],
    ids=["jax-off", "triton-off", "package-renamed"],
)
def test_a_destructive_answer_change_is_refused_before_anything_is_written(
    template_v1: Path, engine: str, combination: Combination, change: str, refusal: str, tmp_path: Path
) -> None:
    """Switching JAX off would delete JAX ports and break the modules that call them;
    a new package name would leave the user's modules in the old package: copier must stop before
    it writes, and say what to keep."""
    repo = generate(template_v1, engine, tmp_path, combination)
    work_on(repo, combination)  # a scaffolded algorithm among them
    before = tree(repo)
    result = copier_update(repo, "--data", change, check=False)

    assert result.returncode != 0
    assert refusal in result.stderr
    assert f"Keep {change.partition('=')[0]}=" in result.stderr
    assert tree(repo) == before, "the refused update changed files"
    assert not git(repo, "status", "--porcelain")
    copier_update(repo)  # keeping the answers still updates


def test_the_guide_s_rename_keeps_every_line_and_updates_cleanly(v2: dict[str, Path]) -> None:
    """The updating guide's "Rename the package" steps, run as written: the suite passes under
    the new name, the user's export and edits survive, and the next update merges cleanly."""
    repo = v2["copier-single-rename"]
    guide = repo / "docs" / "guide" / "updating.md"
    section = guide.read_text(encoding="utf-8").split("\n### Rename the package\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert block, 'no bash block under "Rename the package"'
    identity = {
        f"GIT_{who}_{what}": value
        for who in ("AUTHOR", "COMMITTER")
        for what, value in (("NAME", "Test"), ("EMAIL", "test@example.org"))
    }
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", PYTHONPATH="src", **identity)
    run(["bash", "-euo", "pipefail", "-c", block.group(1)], cwd=repo, env=env)

    assert not (repo / "src" / PACKAGE).exists()
    assert "from .kernel_density import kernel_density" in (repo / "src/paper_code/__init__.py").read_text()
    copier_update(repo)
    assert not conflicted_files(repo)
    assert not (repo / "src" / PACKAGE).exists(), "the update brought the old package back"
    renamed = [
        Edit(edit.path.replace(PACKAGE, "paper_code"), edit.old, edit.new)
        for edit in user_changes(Combination("single", jax=False))
    ]
    assert all(edit.applied(repo) for edit in renamed)
    assert all(change.applied(repo) for change in CONVENTION_CHANGES), "v2.0.0 did not arrive"


def test_the_oldest_copier_refuses_a_layout_change_too(oldest_copier: Path, template_v1: Path, tmp_path: Path) -> None:
    """The refusal relies on `_external_data` and `_folder_name`: copier.yml's minimum has both."""
    repo = generate(template_v1, "copier", tmp_path / "out", Combination("split", jax=False))
    before = tree(repo)
    command = [str(oldest_copier), "update", "--defaults", "--quiet", "--data", "layout=single"]
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
