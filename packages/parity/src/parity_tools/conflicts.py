"""List every file with unresolved conflicts, and fail if there is one.

    parity conflicts            # every file git tracks or would track
    parity conflicts FILE...    # these files (pre-commit passes the staged ones)

`copier update` and `git merge` leave `<<<<<<<` / `>>>>>>>` markers where they could not merge,
and copier may leave a `.rej` file beside a file it could not patch; copier still exits 0. And
where a release no longer has a file (the harness and scripts an earlier release copied into the
repo), `copier update` deletes it even where you edited it: until the update is committed, a file
it deleted with edits made since the template last wrote it is reported too; cruft leaves such a
file where it was, and a copy of that machinery left in the repo is reported until it is gone.
It reads the files as text and never imports them, so it reports a conflict in noxfile.py or
pyproject.toml, which nox, pip, ruff and pytest cannot even load; it imports nothing beyond
Python's standard library. pre-commit runs it on every commit, CI before nox, and you any time.

Exit status: 0 when nothing is left unresolved, 1 otherwise (each file and line on stdout).
`--names` prints only the files' names, one a line, for other programs (the noxfile) to read.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

# Seven of `<` or `>` at the start of a line, then a space or the line's end. Written as
# repetitions so that this file does not report itself.
MARKER = re.compile(rb"^(?:<{7}|>{7})(?: .*)?$", re.MULTILINE)
# Folders never searched when git cannot list the files (environments, caches).
SKIPPED = {".git", ".venv", "venv", ".nox", ".tox", "node_modules", "__pycache__"}
HOW_TO_RESOLVE = (
    "In each file, keep what you want between the markers and delete the <<<<<<< and >>>>>>> "
    "lines (and the ======= between them); apply each .rej file's change by hand, then delete "
    "the .rej file. Then run `parity conflicts` again."
)
# The answers file: its last commit is the template's last generation or update of this repo.
ANSWERS = ".copier-answers.yml"
# What earlier releases of the template copied into each repo, and this package now holds.
COPIED_BEFORE = re.compile(
    r"tests/parity/.*|scripts/skeleton/.*|scripts/(new_algorithm|bench|bench_compare|bench_report"
    r"|bench_sizes|check_conflicts|results|sweep|template_update)\.py"
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


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def deleted_with_edits() -> dict[str, list[str]]:
    """Files deleted since the last commit (as an update deletes a file the template no longer
    has) that changed since the template last wrote them (the last commit of the answers file):
    their edits would go with them."""
    synced = git("log", "-1", "--format=%h", "--", ANSWERS).stdout.strip()
    deleted = git("diff", "-z", "--name-only", "--diff-filter=D", "HEAD").stdout.split("\0")
    if not synced:
        return {}
    how = "(`git diff {0} HEAD -- {1}` shows them): carry them over, then commit the update"
    return {
        name: [
            f"{name}: deleted by the update, with your edits since {synced} "
            + how.format(synced, name)
        ]
        for name in filter(None, deleted)
        if git("diff", "--quiet", synced, "HEAD", "--", name).returncode == 1
    }


def copies_left(names: list[str]) -> dict[str, list[str]]:
    """Copies of the machinery that earlier releases put in the repo, left there (an update
    keeps a copy it cannot delete because it was edited): nothing uses them any more."""
    how = "a copy of what the package parity now holds, left by an update: carry your edits over"
    left = [name for name in names if COPIED_BEFORE.fullmatch(name) and Path(name).is_file()]
    return {name: [f"{name}: {how}, then delete it"] for name in left}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List every file with unresolved conflicts.")
    parser.add_argument("files", nargs="*", help="default: every file git tracks or would track")
    parser.add_argument("--names", action="store_true", help="print only the files' names")
    arguments = parser.parse_args(argv)
    names = arguments.files or candidate_files()
    report = {name: found for name in names if (found := conflicts_in(name))}
    if not arguments.files:  # the pre-commit hook passes the staged files: the update is checked
        report |= deleted_with_edits() | copies_left(names)
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
