"""Free text (names, descriptions) never breaks the output and never runs as code.

Hypothesis types awkward text at cookiecutter's prompts and gives it to copier in a data file; the
generated TOML, YAML and Python must stay valid and carry the text exactly as typed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests.render import only_child, render_cookiecutter, render_copier, tree

# Pieces that have broken templates before: quotes, escapes, Jinja and TOML/YAML syntax, code.
AWKWARD = [
    '"',
    "'",
    "\\",
    "\\n",
    '"""',
    "{{ x }}",
    "{% raw %}",
    "${{ github.token }}",
    "# not a comment",
    ": not a key",
    "- not an item",
    "[not a table]",
    "Zoë",
    "Ørsted",
    "李",
    "🎉",
    "\U0001d518",  # outside the Basic Multilingual Plane, like the emoji
    '"); __import__("os").system("touch PWNED"); ("',
    "{{ cookiecutter.__class__.__mro__ }}",
]
text = st.lists(
    st.one_of(st.sampled_from(AWKWARD), st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S"]))),
    min_size=1,
    max_size=4,
).map(" ".join)
# A prompt drops what a user cannot type: surrounding blanks; an empty answer keeps the default.
line = text.map(str.strip).filter(bool)


@settings(
    max_examples=6,
    deadline=None,
    # Each example renders twice (~2 s): report a failing example as found rather than shrink it.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(project_name=line, description=line, author_name=line)
@example(
    project_name='Zoë\'s "{{ x }}" \\ 🎉',
    description='"""); __import__("os").system("touch PWNED"); ("""',
    author_name="O'Brien \\n ${{ github.token }}",
)
def test_free_text_arrives_verbatim_and_valid(
    template_repo: Path,
    tmp_path_factory: pytest.TempPathFactory,
    project_name: str,
    description: str,
    author_name: str,
) -> None:
    workspace = tmp_path_factory.mktemp("free-text")
    answers = {
        "project_name": project_name,
        "project_slug": "free-text",
        "description": description,
        "author_name": author_name,
    }
    render_cookiecutter(template_repo, workspace / "cookiecutter", answers)
    render_copier(template_repo, workspace / "copier" / "free-text", answers)
    from_cookiecutter = only_child(workspace / "cookiecutter")
    assert tree(from_cookiecutter) == tree(workspace / "copier" / "free-text")

    pyproject = tomllib.loads((from_cookiecutter / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["description"] == description
    assert pyproject["project"]["authors"][0]["name"] == author_name
    for path in from_cookiecutter.rglob("*"):
        if path.suffix in {".yml", ".yaml", ".cff"}:
            yaml.safe_load(path.read_text(encoding="utf-8"))
        elif path.suffix == ".py":
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
    recorded = yaml.safe_load((from_cookiecutter / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert {key: recorded[key] for key in answers} == answers
    assert project_name in (from_cookiecutter / "README.md").read_text(encoding="utf-8")
    assert not list(workspace.rglob("PWNED")), "an answer ran as code"
