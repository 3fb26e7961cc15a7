"""cookiecutter.json and copier.yml ask the same questions, with the same defaults and choices."""

from __future__ import annotations

import keyword
import re
import sys

import pytest

from tests.render import COOKIECUTTER_JSON, COPIER_YML, QUESTIONS, ROOT

COPIER_QUESTIONS = {
    name: spec for name, spec in COPIER_YML.items() if not name.startswith("_") and spec.get("when") is not False
}


def test_same_questions_in_the_same_order() -> None:
    assert list(COPIER_QUESTIONS) == QUESTIONS


@pytest.mark.parametrize("name", QUESTIONS)
def test_same_default_and_choices(name: str) -> None:
    cookiecutter_value = COOKIECUTTER_JSON[name]
    copier_spec = COPIER_QUESTIONS[name]
    if isinstance(cookiecutter_value, list):
        # cookiecutter offers a list, its first entry the default
        assert copier_spec["choices"] == cookiecutter_value
        assert copier_spec["default"] == cookiecutter_value[0]
    elif isinstance(cookiecutter_value, str):
        # the same Jinja, once with cookiecutter's `cookiecutter.` prefix
        assert copier_spec["default"] == cookiecutter_value.replace("cookiecutter.", "")
    else:
        assert copier_spec["default"] == cookiecutter_value


@pytest.mark.parametrize("name", QUESTIONS)
def test_same_help_text(name: str) -> None:
    assert COPIER_QUESTIONS[name]["help"] == COOKIECUTTER_JSON["__prompts__"][name]


@pytest.mark.parametrize("name", QUESTIONS)
def test_same_type(name: str) -> None:
    expected = {bool: "bool", str: "str", list: "str"}[type(COOKIECUTTER_JSON[name])]
    assert COPIER_QUESTIONS[name]["type"] == expected


def test_the_computed_cookiecutter_variable_carries_every_answer() -> None:
    """copier renders `{{ cookiecutter.x }}` through this variable: a missing key renders empty."""
    for name in QUESTIONS:
        assert f'"{name}": {{{{ {name} | tojson }}}}' in COPIER_YML["cookiecutter"]["default"]


def test_both_engines_compute_the_same_private_variables() -> None:
    """cookiecutter.json's rendered `__x` keys are the `__x` entries of copier's `cookiecutter`
    variable (their values are compared in the rendered files, tests/test_engines.py).
    `__project_dir` only names cookiecutter's template folder; copier uses `_subdirectory`."""
    computed = {key for key in COOKIECUTTER_JSON if key.startswith("__")} - {"__prompts__", "__project_dir"}
    in_copier = set(re.findall(r'"(__\w+)":', COPIER_YML["cookiecutter"]["default"]))
    assert computed == in_copier


def test_copier_needs_no_trust() -> None:
    assert not {"_tasks", "_migrations", "_jinja_extensions"} & set(COPIER_YML)


def test_reserved_package_names_cover_what_a_package_must_not_shadow() -> None:
    reserved = set((ROOT / "hooks" / "reserved-package-names.txt").read_text(encoding="utf-8").split())
    # Names with capitals (cProfile) are already refused as not lower case.
    public_stdlib = {name for name in sys.stdlib_module_names if not name.startswith("_") and name.islower()}
    assert public_stdlib <= reserved
    assert {word for word in keyword.kwlist if word.islower()} <= reserved
    assert {"numpy", "torch", "jax", "tests", "hypothesis", "pytest"} <= reserved
