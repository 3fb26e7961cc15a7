"""Sphinx's settings for the docs site: `nox -s docs` builds it into docs/_build/html.

The guide's pages are Markdown (MyST); each algorithm's page (docs/algorithms/) is built from its
docstrings, numpydoc style, whose math (``.. math::`` in Notes) MathJax renders. MathJax comes
from a package (sphinx-mathjax-offline) and is served from the site itself: no CDN, so the site
builds and reads offline, as on a cluster.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[1]
# The package's sources as they are now, rather than an installed copy that may be older.
sys.path.insert(0, str(ROOT / "src"))

# The README's title, read rather than pasted here: it is free text.
title = ROOT.joinpath("README.md").read_text(encoding="utf-8").partition("\n")[0]
project = title.removeprefix("# ")
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx-mathjax-offline",  # the package's module name, hyphens and all
]
exclude_patterns = ["_build"]
# `x` in a docstring is code, as the docstrings mean it (reStructuredText's default is italics).
default_role = "code"
napoleon_google_docstring = False
html_theme = "alabaster"
html_show_copyright = False  # LICENSE says it
html_theme_options = {"description": "The guide, and the math of each algorithm"}

# A docstring written as a plain string turns the backslashes of its LaTeX into escapes: \frac
# becomes a form feed and "rac", \beta a backspace, \nabla a new line. Sphinx then reports the
# broken reST ("Unexpected section title") without naming the docstring: this names it first.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# A backslash (not itself escaped) before a letter that starts no unicode escape.
ESCAPED_LETTER = re.compile(r"(?<!\\)(?:\\\\)*\\(?![NuUx])[a-zA-Z]")
HINT = 'make it a raw string r"""...""" (the backslashes of its LaTeX then stay as written)'
logger = logging.getLogger(__name__)


def plain_literal_with_escapes(obj: object) -> bool:
    """Whether `obj`'s docstring is written as a plain (not raw) string with a backslash before
    a letter in its source: LaTeX that Python read as escapes."""
    try:
        source = textwrap.dedent(inspect.getsource(obj))  # type: ignore[arg-type]
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body if inspect.ismodule(obj) else getattr(tree.body[0], "body", [])
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return False
    literal = ast.get_source_segment(source, first.value) or ""
    return not literal.lower().startswith(("r", "br")) and bool(ESCAPED_LETTER.search(literal))


def check_docstring(
    _app: object, what: str, name: str, obj: object, _options: object, lines: list[str]
) -> None:
    """Warn (an error under -W, as `nox -s docs` builds) where a docstring lost its backslashes."""
    code = what in {"module", "class", "function", "method"}
    # Its own text where it has one: the lines have lost the form feeds, read as line breaks.
    text = obj.__doc__ if code and isinstance(obj.__doc__, str) else "\n".join(lines)
    if controls := sorted({repr(char) for char in CONTROL.findall(text)}):
        found = ", ".join(controls)
        said = f"its docstring holds control characters {found}"
        logger.warning("%s %s: %s: %s", what, name, said, HINT)
    elif code and plain_literal_with_escapes(obj):
        logger.warning("%s %s: its docstring is a plain string with escapes: %s", what, name, HINT)


def setup(app: Any) -> None:
    app.connect("autodoc-process-docstring", check_docstring)
