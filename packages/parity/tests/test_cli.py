"""The command `parity`: its subcommands listed, and a clear refusal, naming what to do, where
it runs outside a repo made by the template."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity_tools.cli import COMMANDS

PARITY = [sys.executable, "-m", "parity_tools"]


def parity(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PARITY, *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_lists_its_subcommands(tmp_path: Path) -> None:
    shown = parity("--help", cwd=tmp_path)
    assert shown.returncode == 0
    for name, (_, about) in COMMANDS.items():
        assert f"  {name}" in shown.stdout
        assert about in shown.stdout
    unknown = parity("frob", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "parity: unknown subcommand 'frob'" in unknown.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new", "mse", "x"], "no .copier-answers.yml in"),
        (["bench", "--profile", "quick"], "expected one package with a _dispatch.py under src/"),
    ],
    ids=["new", "bench"],
)
def test_outside_a_repo_it_says_where_to_run_it(
    tmp_path: Path, args: list[str], message: str
) -> None:
    refused = parity(*args, cwd=tmp_path)
    assert refused.returncode == 1
    assert message in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "run it from" in refused.stderr
    assert list(tmp_path.iterdir()) == []  # nothing half-made
