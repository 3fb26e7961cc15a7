"""Both engines write `.copier-answers.yml`, so `copier update` works whichever engine made the repo."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml

from tests.render import BIN, QUESTIONS, Combination, Render, git, only_child, render_cookiecutter, run

DEFAULT = Combination("single", jax=False)


def read_answers(repo: Path) -> dict[str, object]:
    answers: dict[str, object] = yaml.safe_load((repo / ".copier-answers.yml").read_text(encoding="utf-8"))
    return answers


def test_records_template_version_source_and_every_answer(rendered: Render, template_repo: Path) -> None:
    answers = read_answers(rendered("cookiecutter", DEFAULT))
    assert answers["_commit"] == "v0.1.0"
    assert answers["_src_path"] == str(template_repo)
    assert set(answers) == {"_commit", "_src_path", *QUESTIONS}
    assert answers == read_answers(rendered("copier", DEFAULT))


def test_a_relative_template_path_is_recorded_absolute(template_repo: Path, tmp_path: Path) -> None:
    run(
        [BIN / "cookiecutter", "--no-input", "-o", tmp_path, template_repo.name],
        cwd=template_repo.parent,
        env={**os.environ, "PWD": str(template_repo.parent)},  # as a shell sets it
    )
    assert read_answers(only_child(tmp_path))["_src_path"] == str(template_repo)


def test_commits_after_the_tag_are_described(template_repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "template"
    git(tmp_path, "clone", "-q", str(template_repo), str(clone))
    git(clone, "commit", "-q", "--allow-empty", "-m", "work after the release")
    render_cookiecutter(clone, tmp_path / "out", {})
    assert str(read_answers(only_child(tmp_path / "out"))["_commit"]).startswith("v0.1.0-1-g")


def test_a_template_outside_git_warns_that_updates_will_not_work(template_repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "template"
    shutil.copytree(template_repo, plain, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    result = render_cookiecutter(plain, tmp_path / "out", {})
    assert "`copier update` will not be able" in " ".join(result.stderr.split())
    assert "_commit" not in read_answers(only_child(tmp_path / "out"))


def test_a_checkout_without_symlinks_gets_a_clear_error(template_repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "template"
    git(tmp_path, "-c", "core.symlinks=false", "clone", "-q", str(template_repo), str(clone))
    result = render_cookiecutter(clone, tmp_path / "out", {}, check=False)
    assert result.returncode != 0
    assert "is not a symlink to template/" in result.stderr
    assert "core.symlinks=true" in result.stderr
    assert not any((tmp_path / "out").iterdir())
