"""Both engines refuse the same bad answers, say what to type instead, and leave nothing behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.render import render_cookiecutter, render_copier

# (id, answers, a piece of the message both engines must show)
BAD_ANSWERS: list[tuple[str, dict[str, Any], str]] = [
    ("empty-project-name", {"project_name": " "}, "project name is empty"),
    ("project-name-with-newline", {"project_name": "Two\nlines"}, "one line"),
    ("empty-slug", {"project_slug": ""}, "slug is empty"),
    ("slug-with-slash", {"project_slug": "a/b"}, "outside the output folder"),
    ("slug-parent-folder", {"project_slug": "../evil"}, "outside the output folder"),
    ("slug-leading-dot", {"project_slug": ".hidden"}, "outside the output folder"),
    ("slug-absolute-path", {"project_slug": "/tmp/evil"}, "outside the output folder"),
    ("slug-backslash", {"project_slug": "a\\b"}, "outside the output folder"),
    ("slug-upper-case", {"project_slug": "My-Project"}, "not a valid distribution name"),
    ("slug-with-space", {"project_slug": "my project"}, 'e.g. "my-project"'),
    ("slug-trailing-hyphen", {"project_slug": "project-"}, "not a valid distribution name"),
    ("package-with-hyphen", {"package_name": "my-package"}, "not a lower-case Python identifier"),
    ("package-leading-digit", {"package_name": "2fast"}, 'e.g. "pkg_2fast"'),
    ("package-upper-case", {"package_name": "MyPackage"}, "not a lower-case Python identifier"),
    ("package-non-ascii", {"package_name": "zoë"}, "not a lower-case Python identifier"),
    ("package-keyword", {"package_name": "lambda"}, "Python keyword"),
    ("package-shadows-stdlib", {"package_name": "random"}, "would shadow"),
    ("package-shadows-numpy", {"package_name": "numpy"}, "would shadow"),
    ("package-shadows-torch", {"package_name": "torch"}, "would shadow"),
    ("package-shadows-tests", {"package_name": "tests"}, "would shadow"),
    ("empty-author", {"author_name": ""}, "author name is empty"),
    ("email-without-at", {"author_email": "ada.example.org"}, "not an e-mail address"),
    ("email-with-space", {"author_email": "ada @example.org"}, "not an e-mail address"),
    ("github-owner-with-space", {"github_owner": "ada lovelace"}, "not a GitHub user"),
    ("description-with-newline", {"description": "line one\nline two"}, "one line"),
]
# Refused by each engine's own handling of choices and yes/no answers, each in its own words.
BAD_CHOICES: list[tuple[str, dict[str, Any], str]] = [
    ("license-not-offered", {"license": "GPL-3.0"}, "GPL-3.0"),
    ("layout-not-offered", {"layout": "flat"}, "flat"),
    ("python-not-offered", {"python_version": "2.7"}, "2.7"),
    ("jax-neither-yes-nor-no", {"jax": "maybe"}, "maybe"),
]


def cases(table: list[tuple[str, dict[str, Any], str]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("answers", "message"), [case[1:] for case in table], ids=[case[0] for case in table]
    )


def assert_nothing_left(workspace: Path) -> None:
    leftovers = sorted(path.relative_to(workspace).as_posix() for path in workspace.rglob("*"))
    assert leftovers in ([], ["out"]), f"left behind: {leftovers}"


@cases(BAD_ANSWERS)
def test_cookiecutter_refuses(template_repo: Path, tmp_path: Path, answers: dict[str, Any], message: str) -> None:
    # An empty line at a prompt keeps the default, and a prompt cannot receive a newline.
    typed = all(value and "\n" not in value for value in answers.values())
    result = render_cookiecutter(template_repo, tmp_path / "out", answers, typed=typed, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert "nothing was generated" in result.stderr
    assert_nothing_left(tmp_path)


@cases(BAD_ANSWERS)
def test_copier_refuses(template_repo: Path, tmp_path: Path, answers: dict[str, Any], message: str) -> None:
    result = render_copier(template_repo, tmp_path / "out" / "project", answers, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert_nothing_left(tmp_path / "out")


@cases(BAD_CHOICES)
@pytest.mark.parametrize("engine", ["cookiecutter", "copier"])
def test_choices_and_yes_no_are_enforced(
    template_repo: Path, tmp_path: Path, engine: str, answers: dict[str, Any], message: str
) -> None:
    if engine == "cookiecutter":
        result = render_cookiecutter(template_repo, tmp_path / "out", answers, typed=False, check=False)
    else:
        result = render_copier(template_repo, tmp_path / "out" / "project", answers, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert_nothing_left(tmp_path / "out" if engine == "copier" else tmp_path)


# Unusual but valid answers: both engines accept them.
GOOD_ANSWERS: list[tuple[str, dict[str, Any]]] = [
    ("dotted-slug", {"project_slug": "lab.paper-2026", "package_name": "paper2026"}),
    ("single-letter-names", {"project_slug": "x", "package_name": "x"}),
    ("unicode-name", {"project_name": "Zoë's Étude", "author_name": "Zoë O'Brien-Smith"}),
    ("plus-address", {"author_email": "ada+paper@lab.example.org"}),
]


@pytest.mark.parametrize("answers", [case[1] for case in GOOD_ANSWERS], ids=[case[0] for case in GOOD_ANSWERS])
def test_both_engines_accept(template_repo: Path, tmp_path: Path, answers: dict[str, Any]) -> None:
    render_cookiecutter(template_repo, tmp_path / "cookiecutter", answers)
    render_copier(template_repo, tmp_path / "copier" / "project", answers)
