r"""A Sphinx extension: the docs build names a docstring whose LaTeX Python read as escapes.

A docstring written as a plain string turns the backslashes of its LaTeX into escapes: \frac
becomes a form feed and "rac", \beta a backspace, \nabla a new line. Sphinx then reports the
broken reST ("Unexpected section title") without naming the docstring. With this extension in a
repo's docs/conf.py, the build warns first (an error under -W, as `nox -s docs` builds), naming the
object and the fix: a raw string, as `parity new` writes.

It also gives a constant that a package re-exports (``parity.BACKENDS``, assigned in
parity/backends.py) the ``#:`` comment above its assignment, which autodoc looks for only in the
package's ``__init__.py``.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
from typing import Any

from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

# What such escapes leave behind: control characters other than tab and new line.
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


def reexported_comment(
    _app: object, what: str, name: str, obj: object, _options: object, lines: list[str]
) -> None:
    """A re-exported constant without a comment of its own (``parity.DTYPES``) takes the ``#:``
    comment of the package's module that assigns that very object, in place of none or of the
    docstring of its type (``tuple``'s), which autodoc may fall back to."""
    package, _, attribute = name.rpartition(".")
    inherited = (type(obj).__doc__ or "").strip().splitlines()[:1]
    first = [line for line in lines if line.strip()][:1]
    if what != "data" or not package or first not in ([], inherited):
        return
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith(package + ".") or getattr(module, attribute, None) is not obj:
            continue
        try:
            comment = ModuleAnalyzer.for_module(module_name).find_attr_docs().get(("", attribute))
        except PycodeError:
            continue
        if comment:
            lines[:] = comment
            return


def setup(app: Any) -> dict[str, Any]:
    app.connect("autodoc-process-docstring", check_docstring)
    app.connect("autodoc-process-docstring", reexported_comment)
    return {"parallel_read_safe": True}
