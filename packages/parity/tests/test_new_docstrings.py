r"""`parity new` writes every docstring as a raw string, in every layout and style: the guide
asks for LaTeX under ``.. math::``, and in a plain string ``\frac`` and ``\beta`` would become
control characters."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from parity_tools.new import SKELETON, Constraints, Parameter, Repo, files


def docstrings(source: str) -> list[tuple[str, str]]:
    """Each docstring of `source`'s module, classes and functions: (where, its literal)."""
    tree = ast.parse(source)
    found = []
    for node in [tree, *ast.walk(tree)]:
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
            literal = ast.get_source_segment(source, first.value) or ""
            found.append((getattr(node, "name", "module"), literal))
    return found


@pytest.mark.parametrize(
    ("layout", "jax", "shared"),
    list(itertools.product(["single", "split"], [False, True], [False, True])),
    ids=str,
)
def test_every_docstring_it_writes_is_raw(layout: str, jax: bool, shared: bool) -> None:
    repo = Repo("pkg", layout, jax)
    written = files(
        repo,
        "rms_norm",
        {"x": "...d", "weight": "d"},
        [Parameter("eps", "float", "1e-6")],
        Constraints(),
        shared,
    )
    plain = [
        f"{Path(path).name}: {where}"
        for path, text in written.items()
        for where, literal in docstrings(text)
        if not literal.lower().startswith("r")
    ]
    assert not plain, f"plain (not raw) docstrings: {plain}"


def test_it_names_its_pieces_where_they_are() -> None:
    """No text in `parity new` names the folder its pieces came from before the package."""
    source = Path(files.__code__.co_filename).read_text(encoding="utf-8")
    assert "scripts/skeleton" not in source
    assert SKELETON.name in source
