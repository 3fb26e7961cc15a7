"""The docs build of a generated repo names the docstring at fault where one lost its LaTeX to
Python's escapes (a plain string where a raw one was meant: ``\\frac`` became a form feed and
"rac", ``\\nabla`` a new line), and says to make it a raw string, instead of leaving the reader
with docutils' "Unexpected section title" and no name. Its docs/conf.py is copied unrendered, so
a folder with that file, a README and one module is a whole site."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.render import ROOT

MODULE = '''r"""A module whose docstrings are written three ways."""


def good(x):
    r"""A raw docstring.

    .. math::

        \\frac{e^{x_i}}{\\sum_j e^{x_j}}
    """
    return x


def broken(x):
    """A plain docstring: \\frac became a form feed, \\beta a backspace.

    .. math::

        \\frac{\\beta}{2}
    """
    return x


def escaped(x):
    """A plain docstring whose escape Python took as a new line: \\nabla f."""
    return x
'''


def site(tmp_path: Path, module: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "template" / "docs" / "conf.py", tmp_path / "docs" / "conf.py")
    (tmp_path / "README.md").write_text("# Demo\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "demo.py").write_text(module, encoding="utf-8")
    (tmp_path / "docs" / "index.rst").write_text("Demo\n====\n\n.. automodule:: demo\n   :members:\n")
    command = [sys.executable, "-m", "sphinx", "-M", "html", "docs", str(tmp_path / "out"), "-W", "--keep-going", "-q"]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)


def test_a_docstring_that_lost_its_backslashes_is_named(tmp_path: Path) -> None:
    built = site(tmp_path, MODULE)
    assert built.returncode != 0
    said = built.stderr
    broken = said.index("function demo.broken: its docstring holds control characters")
    assert "'\\x08', '\\x0c'" in said
    assert "function demo.escaped: its docstring is a plain string with escapes" in said
    assert 'make it a raw string r"""..."""' in said
    assert "demo.good" not in said
    # Named before docutils' own complaints about what the escapes did to the text.
    later = [said.find(word) for word in ("ERROR", "Unexpected") if word in said]
    assert all(broken < where for where in later), said


def test_raw_docstrings_build_cleanly(tmp_path: Path) -> None:
    fixed = MODULE.replace('    """A plain', '    r"""A plain')
    built = site(tmp_path, fixed)
    assert built.returncode == 0, built.stderr
