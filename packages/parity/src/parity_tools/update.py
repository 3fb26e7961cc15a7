"""Bring the template's newest release into a branch of its own, commit it, run the linters over
every file, and write the pull request's title and body.

    nox -s template_update            # installs the pinned copier and ruff
    parity update --body-file pr.md   # in an environment that has them

Nothing is pushed, merged or resolved: where `copier update` cannot merge a file, its conflict
markers are committed as copier left them, and the pull request is a draft that lists them. The
linters then check every file, not only those a commit stages, so that a rule the update brings
shows where your own files break it; what they found goes into the pull request (a draft then
too). The title and body go to stdout, progress to stderr; under GitHub Actions (`GITHUB_OUTPUT`
set) the results go to the workflow's later steps: update, branch, title, body_file, draft.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO

from .conflicts import candidate_files, conflicts_in, deleted_with_edits

ANSWERS_FILE = Path(".copier-answers.yml")
# How copier (through dunamai) names a template's commit that no tag marks: the last release (0.0.0
# where none), the commits since, and the commit's short hash (after a "g" in git's describe).
UNTAGGED = re.compile(r"(?P<base>\d+(?:\.\d+)*)\.post(?P<after>\d+)\.dev0\+g?(?P<commit>[0-9a-f]+)")
# Each linter over the whole repo, reporting only: the update's own changes stay reviewable.
LINTERS = {
    "ruff check": ["ruff", "check", "--no-fix", "--output-format", "concise"],
    "ruff format": ["ruff", "format", "--check"],
}
HOW_TO_RESOLVE = [
    "Check out this branch. In each file, keep what you want between the",
    "`<<<<<<< before updating` and `>>>>>>> after updating` markers, then remove them;",
    "apply each `.rej` file's change by hand and delete it. Then commit, push, and",
    "mark this pull request ready for review. `parity conflicts` lists",
    "what is left; CI fails until nothing is.",
]


class UpdateError(Exception):
    """Why the update cannot go on; the message says what to do."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def git(*args: str) -> str:
    """Run git in this repo; its output, without the trailing newline."""
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True
    ).stdout.rstrip()


def tool(
    *command: str, stdout: int | IO[str] = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    """Run copier or ruff, its stderr captured."""
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, check=False)


def version_words(version: str) -> str:
    """A template version as copier reports it, in words: a release only where a tag made it."""
    untagged = UNTAGGED.fullmatch(version)
    if untagged is None:
        return f"release {version}"
    after, base = int(untagged["after"]), untagged["base"]
    since = "no release yet" if set(base) <= {"0", "."} else f"after release {base}"
    if since.startswith("after"):
        since = f"{after} commit{'s' if after != 1 else ''} {since}"
    return f"commit {untagged['commit']}, untagged ({since})"


def version_name(version: str) -> str:
    """`version` as a title names it: a release by its number, a commit in words."""
    return version if UNTAGGED.fullmatch(version) is None else version_words(version)


def copier_failure(command: str, stderr: str) -> str:
    """What `command` (copier's) reported on `stderr`, without a traceback: copier lets some
    errors escape as one, a validator's refusal under --defaults among them (its message on the
    last line)."""
    text = stderr.strip()
    if "Traceback (most recent call last):" not in text:
        return f"{command} failed: {text}"
    last = text.splitlines()[-1]
    kind, _, message = last.partition(": ")
    if kind == "ValueError" and message.startswith("Validation error"):
        return f"copier refused: {message}"
    return f"{command} failed: {last} (run `{command}` to see copier's traceback)"


def newer_release() -> tuple[str, str] | None:
    """The release this repo was made from and the template's newest, or None if up to date."""
    check = tool("copier", "check-update", "--output-format", "json")
    if check.returncode not in {0, 2}:  # 2: a newer release exists
        msg = copier_failure("copier check-update", check.stderr)
        raise UpdateError(msg)
    status = json.loads(check.stdout.strip().splitlines()[-1])
    if not status["update_available"]:
        current = status["current_version"]
        if UNTAGGED.fullmatch(current):
            log(f"Up to date with the template: {version_words(current)}.")
        else:
            log(f"Up to date: the template's newest release is {current}.")
        return None
    return status["current_version"], status["latest_version"]


def lint_everything() -> dict[str, list[str]]:
    """What each linter found over the whole repo: its report's lines, none where it passed."""
    found = {}
    for name, command in LINTERS.items():
        result = tool(*command)
        report = (result.stdout + result.stderr).strip().splitlines()
        if result.returncode != 0:
            found[name] = report or [f"exit status {result.returncode}"]
        else:
            found[name] = []
        log(f"{name}: " + (found[name][-1] if found[name] else "nothing found"))
    return found


def template_source() -> str:
    """Where the template lives: `_src_path` in the answers file (one line of plain YAML)."""
    for line in ANSWERS_FILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("_src_path:"):
            return line.partition(":")[2].strip().strip("'\"")
    return "the template"


def change_kind(status: str) -> str:
    """A `git status --porcelain` code (XY) in words."""
    if "U" in status or status in {"AA", "DD"}:
        return "not merged"
    if "?" in status or "A" in status:
        return "new"
    return "deleted" if "D" in status else "changed"


def pull_request_body(
    releases: tuple[str, str], changed: list[str], conflicts: list[str], lint: dict[str, list[str]]
) -> str:
    """What the update changed, every file it could not merge, and what the linters found."""
    moved = " to ".join(version_name(version) for version in releases)
    lines = [
        f"`copier update` brought the template ({template_source()}) from {moved};",
        "its CHANGELOG.md says what each release changed. Files this update touched:",
        "",
        *(f"- `{line[3:]}` ({change_kind(line[:2])})" for line in changed),
    ]
    if conflicts:
        lines += [
            "",
            "**Draft: copier could not merge these files.** Nothing was resolved for you:",
        ]
        lines += ["", *(f"- `{name}`" for name in conflicts), "", *HOW_TO_RESOLVE]
    lines += ["", "The linters over every file, after the update:", ""]
    for name, report in lint.items():
        lines.append(f"- `{name}`: " + (report[-1] if report else "nothing found"))
    if any(lint.values()):
        lines += ["", "**Draft: the linters found problems.** Their reports:", ""]
        for name, report in lint.items():
            lines += [f"`{name}`:", "", "```text", *report, "```", ""] if report else []
        lines.append("Fix them on this branch (`ruff check --fix`, `ruff format`), review, commit.")
    return "\n".join(lines) + "\n"


def github_output(**values: str) -> None:
    """Hand results to later steps of a GitHub Actions job (nothing outside Actions)."""
    if output := os.environ.get("GITHUB_OUTPUT"):
        with Path(output).open("a", encoding="utf-8") as file:
            file.writelines(f"{key}={value}\n" for key, value in values.items())


def update(body_file: Path | None) -> None:
    missing = [name for name in ("copier", "ruff") if shutil.which(name) is None]
    if missing:
        tools, are = " and ".join(missing), "is" if len(missing) == 1 else "are"
        msg = f"{tools} {are} not installed here: nox -s template_update installs them"
        raise UpdateError(msg)
    if git("status", "--porcelain"):
        msg = "uncommitted changes: commit or stash them first, then run this again"
        raise UpdateError(msg)
    releases = newer_release()
    if releases is None:
        github_output(update="false")
        return
    # A branch per release, made afresh from here: running again refreshes it.
    branch = f"template-update/{releases[1]}"
    git("switch", "--force-create", branch)
    # copier reports on stderr, so that stdout carries only the pull request's text.
    updated = tool("copier", "update", "--defaults", "--conflict", "inline", stdout=sys.stderr)
    if updated.returncode != 0:
        msg = copier_failure("copier update", updated.stderr)
        raise UpdateError(msg)
    conflicts = [name for name in candidate_files() if conflicts_in(name)]
    conflicts += list(deleted_with_edits())
    changed = git("status", "--porcelain", "--untracked-files=all").splitlines()
    git("add", "--all")
    title = f"Update from the template: {version_name(releases[0])} to {version_name(releases[1])}"
    # Markers are committed as copier left them (never resolved here); --no-verify because the
    # pre-commit hooks rightly refuse them. The lint session keeps the branch from going green.
    git("commit", "--quiet", "--no-verify", "--message", title)
    lint = lint_everything()
    body = pull_request_body(releases, changed, conflicts, lint)
    sys.stdout.write(f"{title}\n\n{body}")
    if body_file is not None:
        body_file.write_text(body, encoding="utf-8")
    log(f"On branch {branch}. To propose it: git push --force -u origin {branch}")
    github_output(
        update="true",
        branch=branch,
        title=title,
        body_file=str(body_file.resolve()) if body_file else "",
        draft=str(bool(conflicts) or any(lint.values())).lower(),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Bring the template's newest release into a branch, committed and linted."
    )
    parser.add_argument("--body-file", type=Path, help="also write the pull request's body here")
    arguments = parser.parse_args(argv)
    try:
        update(arguments.body_file)
    except UpdateError as error:
        print(f"parity update: {error}", file=sys.stderr)
        return 1
    return 0
