"""The supported Pythons are one list: the oldest one asked for, and every newer choice.

The question's choices are the list. copier.yml writes it once (its `supported_pythons`, which the
`cookiecutter` variable's `__python_versions` reads, is an alias of the choices); cookiecutter.json
twice, as cookiecutter has no other way to read a question's choices while it renders (a Jinja
global of local_extensions.py would do, but cruft's update imports the previous release's module
first and keeps it). The CI matrix, the classifiers and requires-python read `__python_versions`.
These tests prove the copies agree and the generated files follow them.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.render import COOKIECUTTER_JSON, COPIER_YML, only_child, render_cookiecutter, render_copier

CHOICES: list[str] = COOKIECUTTER_JSON["python_version"]


def computed_list(expression: str) -> list[str]:
    """The literal list in `{% set supported = [...] %}`: cookiecutter.json's second copy."""
    match = re.search(r"\{% set supported = (\[[^\]]*\]) %\}", expression)
    assert match, f"no `{{% set supported = [...] %}}` in {expression!r}"
    supported: list[str] = yaml.safe_load(match.group(1))
    return supported


def test_the_computed_lists_are_the_choices() -> None:
    assert COPIER_YML["python_version"]["choices"] == CHOICES
    assert computed_list(COOKIECUTTER_JSON["__python_versions"]) == CHOICES
    assert COPIER_YML["supported_pythons"]["default"] is COPIER_YML["python_version"]["choices"]


def supported_pythons(repo: Path) -> dict[str, list[str]]:
    """Which Pythons each generated file supports."""
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))
    prefix = "Programming Language :: Python :: "
    classifiers = [c.removeprefix(prefix) for c in project["project"]["classifiers"] if c.startswith(prefix + "3.")]
    oldest = project["project"]["requires-python"].removeprefix(">=")
    return {
        "requires-python": CHOICES[CHOICES.index(oldest) :],
        "classifiers": classifiers,
        "CI matrix": workflow["jobs"]["tests"]["strategy"]["matrix"]["python-version"],
        "mypy": [project["tool"]["mypy"]["python_version"]],
    }


@pytest.mark.parametrize("python_version", CHOICES)
def test_ci_classifiers_and_requires_python_follow_the_answer(
    template_repo: Path, tmp_path: Path, python_version: str
) -> None:
    answers = {"python_version": python_version}
    render_cookiecutter(template_repo, tmp_path / "cookiecutter", answers, typed=False)
    render_copier(template_repo, tmp_path / "copier", answers)
    expected = CHOICES[CHOICES.index(python_version) :]
    for repo in (only_child(tmp_path / "cookiecutter"), tmp_path / "copier"):
        found = supported_pythons(repo)
        assert found == {
            "requires-python": expected,
            "classifiers": expected,
            "CI matrix": expected,
            "mypy": [python_version],
        }, repo
