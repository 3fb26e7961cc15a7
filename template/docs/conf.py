"""Sphinx's settings for the docs site: `nox -s docs` builds it into docs/_build/html.

The guide's pages are Markdown (MyST); each algorithm's page (docs/algorithms/) is built from its
docstrings, numpydoc style, whose math (``.. math::`` in Notes) MathJax renders. MathJax comes
from a package (sphinx-mathjax-offline) and is served from the site itself: no CDN, so the site
builds and reads offline, as on a cluster.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
    # Names a docstring whose LaTeX Python read as escapes (a plain string, not r"""..."""), which
    # Sphinx would otherwise report as broken reStructuredText somewhere in the page.
    "parity_tools.docstrings",
    "parity_tools.ports",  # reference and ports side by side, how close (reports/parity.json)
]
exclude_patterns = ["_build"]
# `x` in a docstring is code, as the docstrings mean it (reStructuredText's default is italics).
default_role = "code"
napoleon_google_docstring = False
html_theme = "furo"
html_show_copyright = False  # LICENSE says it
