"""Jinja only where the output differs: the tags in template/ stay few, the computed variables that
keep them few exist for both engines, and the generated code keeps to its line length.

A tag-line is a line of a file under template/ that holds ``{{``, ``{%`` or ``{#`` (file names do
not count), as ``grep -rE '\\{\\{|\\{%|\\{#' template | wc -l`` counts them; a statement line one
that holds ``{%`` (a condition, a loop, an include), as ``grep -r '{%' template | wc -l`` does.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib

from tests.render import COMBINATIONS, COOKIECUTTER_JSON, COPIER_YML, ROOT, Render
from tests.wheelhouse import PARITY

TEMPLATE = ROOT / "template"
TAG = re.compile(r"\{\{|\{%|\{#")
STATEMENT = re.compile(r"\{%")
#: The generated repo's code: the package, its tests, its scripts and examples.
CODE = ("src", "tests", "scripts", "examples")
#: Ceilings. The code's tag-lines are the count reached (from 145): lower it when a change lowers
#: the count. What is left there is code that JAX or the layout changes (an import, the worked
#: examples' pieces included in each layout), and the package's name where code imports it. The
#: Array API example (log_softmax) added 16: its pieces in both layouts, and its import in the
#: package's __init__.py, which an update leaves out (41 before). The Triton port added 10: its
#: files' includes in each layout, its import and branch, and softmax's tests' Triton targets.
CODE_BUDGET = 67
#: Statement lines in the whole template: at most 100. A reader of a template file should see the
#: generated file, not the templating: every condition, loop or include cuts into the text it is
#: in, and each one is a branch that only a render of every combination checks. README,
#: CITATION.cff, workflows and pyproject.toml keep one condition per chunk that differs; a page
#: whose words differ in several places decides once, at its top (docs/guide/updating.md), and a
#: workflow wraps its GitHub expressions in one raw block where they stand together.
STATEMENT_BUDGET = 100


def tag_lines(tag: re.Pattern[str] = TAG) -> dict[str, int]:
    """File (relative to template/) -> how many of its lines carry `tag`, for files with any."""
    counts = {}
    for path in sorted(TEMPLATE.rglob("*")):
        if path.is_file():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            if found := sum(1 for line in lines if tag.search(line)):
                counts[path.relative_to(TEMPLATE).as_posix()] = found
    return counts


def listing(counts: dict[str, int]) -> str:
    return "\n".join(f"{count:4} {name}" for name, count in sorted(counts.items(), key=lambda item: -item[1]))


def test_code_keeps_to_its_tag_budget() -> None:
    code = {name: count for name, count in tag_lines().items() if name.startswith(CODE)}
    assert sum(code.values()) <= CODE_BUDGET, listing(code)


def test_template_keeps_to_its_statement_budget() -> None:
    counts = tag_lines(STATEMENT)
    assert sum(counts.values()) <= STATEMENT_BUDGET, listing(counts)


def test_computed_variables_exist_for_both_engines() -> None:
    """A computed ``cookiecutter.__x`` the template uses is defined in cookiecutter.json and in
    copier.yml's ``cookiecutter`` variable (copier would render a missing one as empty text)."""
    used = set()
    for path in TEMPLATE.rglob("*"):
        text = path.relative_to(TEMPLATE).as_posix()
        if path.is_file():
            text += path.read_text(encoding="utf-8", errors="replace")
        used |= set(re.findall(r"cookiecutter\.(__\w+)", text))
    for_copier = set(re.findall(r'"(__\w+)":', COPIER_YML["cookiecutter"]["default"]))
    assert used, "no computed variable found: has the pattern changed?"
    assert used <= COOKIECUTTER_JSON.keys(), used - COOKIECUTTER_JSON.keys()
    assert used <= for_copier, used - for_copier


def test_generated_ruff_checks_line_length(rendered: Render) -> None:
    """E501 is on: `parity new` writes code plainly and leaves line breaking to ruff."""
    repo = rendered("cookiecutter", COMBINATIONS[0])
    ruff = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert "E501" in ruff["lint"]["extend-select"]
    assert '"format", "--quiet"' in (PARITY / "src" / "parity_tools" / "new.py").read_text(encoding="utf-8")


def test_cookiecutter_copies_exactly_the_files_without_jinja() -> None:
    """cookiecutter copies `_copy_without_render` files as they are, where copier renders them:
    only files without Jinja may be there, else the engines' outputs part. And every such file
    with a plain name is there, since compiling it as a template costs the render time (a
    conditional name must be rendered, so those stay out)."""
    copied = COOKIECUTTER_JSON["_copy_without_render"]
    for path in sorted(TEMPLATE.rglob("*")):
        name = path.relative_to(TEMPLATE).as_posix()
        if not path.is_file():
            continue
        # A folder that matches is copied whole, as cookiecutter copies it.
        parts = name.split("/")
        prefixes = ["/".join(parts[: end + 1]) for end in range(len(parts))]
        is_copied = any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes for pattern in copied)
        has_jinja = bool(TAG.search(path.read_text(encoding="utf-8", errors="replace")))
        assert not (is_copied and has_jinja), f"{name} has Jinja: take it out of _copy_without_render"
        plain_name = "{%" not in name
        assert is_copied or has_jinja or not plain_name, f"{name} has no Jinja: add it to _copy_without_render"
