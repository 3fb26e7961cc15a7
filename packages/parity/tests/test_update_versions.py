"""`parity update` calls only a PEP 440 tag a release: a template's untagged commit, as copier
reports it (``0.0.0.post391.dev0+6d71c16``), is named as the commit it is, untagged, with the
release it follows if any."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity_tools.update import version_words


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("2.0.0", "release 2.0.0"),
        ("0.1.0rc1", "release 0.1.0rc1"),
        ("0.0.0.post391.dev0+6d71c16", "commit 6d71c16, untagged (no release yet)"),
        ("0.1.0.post3.dev0+g6d71c16", "commit 6d71c16, untagged (3 commits after release 0.1.0)"),
        ("0.1.0.post1.dev0+6d71c16", "commit 6d71c16, untagged (1 commit after release 0.1.0)"),
    ],
)
def test_a_version_in_words(version: str, words: str) -> None:
    assert version_words(version) == words


UP_TO_DATE = """import json, sys
version = "0.0.0.post391.dev0+6d71c16"
status = {"update_available": False, "current_version": version, "latest_version": version}
print(json.dumps(status))
"""


def test_up_to_date_with_an_untagged_template(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in [("copier", f"#!{sys.executable}\n{UP_TO_DATE}"), ("ruff", "#!/bin/sh\n")]:
        (tools / name).write_text(text, encoding="utf-8")
        (tools / name).chmod(0o700)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    command = [sys.executable, "-m", "parity_tools", "update"]
    ran = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == (
        "Up to date with the template: commit 6d71c16, untagged (no release yet).\n"
    )
