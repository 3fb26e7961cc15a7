"""The parity harness's wheel, built from this working tree into a folder (a wheelhouse).

Generated repos pin `parity`, which is released with the template; here, where this working tree
is the release, they install it from that folder (`PIP_FIND_LINKS`, `UV_FIND_LINKS`), never from
an index. Plain Python with no import of this repo: noxfile.py loads it by its path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PARITY = Path(__file__).resolve().parents[1] / "packages" / "parity"


def build(wheelhouse: Path, python: str = sys.executable) -> Path:
    """Build parity's wheel into `wheelhouse` with `python`'s pip; return the wheel."""
    command = [python, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheelhouse), str(PARITY)]
    subprocess.run(command, check=True)
    (wheel,) = wheelhouse.glob("parity-*.whl")
    return wheel


def find_links(wheelhouse: Path) -> dict[str, str]:
    """The environment that makes pip and uv look for packages in `wheelhouse` too."""
    return {"PIP_FIND_LINKS": str(wheelhouse), "UV_FIND_LINKS": str(wheelhouse)}
