"""`parity update` (and `nox -s template_update`, which runs it) reports a refusal of copier's
as its message, not as copier's traceback: copier 9.19.1 lets a validator's refusal (such as
the template's own "This repo has JAX and an update cannot switch it off") escape as a
ValueError of 50 lines, the message on the last."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

REFUSAL = (
    "Validation error for question 'jax': This repo has JAX and an update cannot switch it off"
)
# What copier prints when a validator refuses an answer under --defaults (abridged).
FAKE_COPIER = f"""#!{sys.executable}
import sys

if sys.argv[1] == "check-update":
    print('{{"update_available": true, "current_version": "0.1.0", "latest_version": "0.2.0"}}')
    sys.exit(2)
print("Keeping template version 0.1.0", file=sys.stderr)
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "/venv/bin/copier", line 6, in <module>', file=sys.stderr)
print("    sys.exit(CopierApp.run())", file=sys.stderr)
print("ValueError: {REFUSAL}", file=sys.stderr)
sys.exit(1)
"""


def test_a_refusal_is_its_message_without_the_traceback(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in [("copier", FAKE_COPIER), ("ruff", "#!/bin/sh\nexit 0\n")]:
        (tools / name).write_text(text, encoding="utf-8")
        (tools / name).chmod(stat.S_IRWXU)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".copier-answers.yml").write_text("_src_path: /template\n", encoding="utf-8")
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.org"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "made"]):
        subprocess.run([*git, *command], cwd=repo, check=True)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    ran = subprocess.run(
        [sys.executable, "-m", "parity_tools", "update"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 1
    assert f"parity update: copier refused: {REFUSAL}" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert "File " not in ran.stderr
