#!/usr/bin/env python3
"""List every file with unresolved conflicts, and fail if there is one.

    python scripts/check_conflicts.py            # every file git tracks or would track
    python scripts/check_conflicts.py FILE...    # these files (pre-commit passes the staged ones)

`copier update` and `git merge` leave `<<<<<<<` / `>>>>>>>` markers where they could not merge,
and copier may leave a `.rej` file beside a file it could not patch; copier still exits 0.
This script reads the files as text and never imports them, so it reports a conflict in
noxfile.py, pyproject.toml or a test helper, which nox, pip, ruff and pytest cannot even load.
It needs only Python 3.8 or newer and git, no installed package: pre-commit runs it on every
commit, CI runs it before nox, and you can run it any time.

Exit status: 0 when nothing is left unresolved, 1 otherwise (each file and line on stdout).
`--names` prints only the files' names, one a line, for other scripts (the noxfile) to read.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

# Seven of `<` or `>` at the start of a line, then a space or the line's end. Written as
# repetitions so that this file does not report itself.
MARKER = re.compile(rb"^(?:<{7}|>{7})(?: .*)?$", re.MULTILINE)
# Folders never searched when git cannot list the files (environments, caches).
SKIPPED = {".git", ".venv", "venv", ".nox", ".tox", "node_modules", "__pycache__"}
HOW_TO_RESOLVE = (
    "In each file, keep what you want between the markers and delete the <<<<<<< and >>>>>>> "
    "lines (and the ======= between them); apply each .rej file's change by hand, then delete "
    "the .rej file. Then run `python scripts/check_conflicts.py` again."
)


def candidate_files() -> list[str]:
    """The files git tracks or would track (ignored ones aside); without git, every file below
    the current folder but environments and caches."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return sorted(
            path.as_posix()
            for path in Path().rglob("*")
            if path.is_file() and not SKIPPED.intersection(path.parts)
        )
    return sorted({name for name in listing.stdout.decode().split("\0") if name})


def conflicts_in(name: str) -> list[str]:
    """`name:line: marker` for each conflict marker in the file; the name alone for a .rej
    file; nothing for a file without conflicts (or one that no longer exists)."""
    if name.endswith(".rej"):
        return [f"{name}: a change `copier update` could not apply"]
    try:
        data = Path(name).read_bytes()
    except OSError:  # deleted since git listed it, or not a file
        return []
    found = []
    for match in MARKER.finditer(data):
        line = data.count(b"\n", 0, match.start()) + 1
        found.append(f"{name}:{line}: {match.group().decode(errors='replace').rstrip()}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List every file with unresolved conflicts.")
    parser.add_argument("files", nargs="*", help="default: every file git tracks or would track")
    parser.add_argument("--names", action="store_true", help="print only the files' names")
    arguments = parser.parse_args(argv)
    names = arguments.files or candidate_files()
    report = {name: found for name in names if (found := conflicts_in(name))}
    if arguments.names:
        for name in report:
            print(name)
        return 1 if report else 0
    if not report:
        print(f"No conflict markers or .rej files in {len(names)} files.")
        return 0
    for found in report.values():
        print("\n".join(found))
    files = ", ".join(report)
    print(
        f"\nUnresolved conflicts (from `copier update` or a merge) in: {files}.\n{HOW_TO_RESOLVE}"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
