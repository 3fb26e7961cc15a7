"""The repo the harness and the tools run in: the nearest folder with a pyproject.toml, from the
working directory up (pytest, nox and the tools run from the repo's root), and the optional
backends its extras declare."""

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
