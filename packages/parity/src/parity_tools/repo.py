"""The repo a tool works on: the nearest folder with a pyproject.toml, from the working directory
up (the tools, pytest and nox run from the repo's root), and the package the template laid out."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path


@functools.cache
def repo_root() -> Path:
    """The repo's root; the working directory where no folder above it has a pyproject.toml."""
    here = Path.cwd()
    found = (folder for folder in (here, *here.parents) if (folder / "pyproject.toml").is_file())
    return next(found, here)


def repo_extras() -> set[str]:
    """The extras of the repo's pyproject.toml (``jax``, ``triton``): its optional backends."""
    pyproject = repo_root() / "pyproject.toml"
    if not pyproject.is_file():
        return set()
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return set(project.get("optional-dependencies", {}))


def repo_package() -> str:
    """The repo's package, as the template lays it out: the one folder under src/ with a
    `_dispatch.py`; elsewhere, exit with what to do."""
    found = sorted(path.parent.name for path in repo_root().glob("src/*/_dispatch.py"))
    if len(found) != 1:
        msg = (
            f"{repo_root()}: expected one package with a _dispatch.py under src/, found "
            f"{found or 'none'}: run it from a repo made by the template (cd <your repo>)"
        )
        raise SystemExit(msg)
    return found[0]
