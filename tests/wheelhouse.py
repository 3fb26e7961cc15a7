"""The parity harness's wheel, built from this working tree into a folder (a wheelhouse).

Generated repos pin `parity`, which is released with the template; here, where this working tree
is the release, they install it from that folder (`PIP_FIND_LINKS`, `UV_FIND_LINKS`), never from
an index. Plain Python with no import of this repo: noxfile.py loads it by its path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

PARITY = Path(__file__).resolve().parents[1] / "packages" / "parity"


def build(wheelhouse: Path, python: str = sys.executable) -> Path:
    """Build parity's wheel into `wheelhouse` with `python`'s pip; return the wheel."""
    command = [python, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheelhouse), str(PARITY)]
    subprocess.run(command, check=True)
    (wheel,) = wheelhouse.glob("parity-*.whl")
    return wheel


def find_links(wheelhouse: Path, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The environment that makes pip and uv look for packages in `wheelhouse` too, besides the
    folders `environ` already names (a machine's own wheelhouse: torch's CPU wheel, offline)."""
    pip = [*environ.get("PIP_FIND_LINKS", "").split(), str(wheelhouse)]  # whitespace-separated
    uv = [*filter(None, environ.get("UV_FIND_LINKS", "").split(",")), str(wheelhouse)]  # commas
    return {"PIP_FIND_LINKS": " ".join(dict.fromkeys(pip)), "UV_FIND_LINKS": ",".join(dict.fromkeys(uv))}


def given(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The folder among `environ`'s PIP_FIND_LINKS that holds parity's wheel, if any (the one
    nox's tests session built)."""
    folders = map(Path, environ.get("PIP_FIND_LINKS", "").split())
    return next((folder for folder in folders if any(folder.glob("parity-*.whl"))), None)
