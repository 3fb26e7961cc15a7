"""The repo a tool works on: its root, found as the harness finds it (`parity.repo`), and the
package the template laid out."""

from __future__ import annotations

from parity.repo import repo_root

__all__ = ["repo_package", "repo_root"]


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
