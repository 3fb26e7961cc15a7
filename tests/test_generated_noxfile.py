"""What the generated noxfile installs, read from the noxfile as nox loads it: the parity harness
from the template's commit, or from wheels/ on a machine without internet access (its README's
"Offline" block), and a docs session that keeps its environment between runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.render import COMBINATIONS, Render, harness_requirement

# Loads the noxfile in the repo's folder, as nox does, and prints what its sessions would install.
LOAD = """
import importlib.util, json, nox
spec = importlib.util.spec_from_file_location("noxfile", "noxfile.py")
noxfile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(noxfile)
docs = nox.registry.get()["docs"]
print(json.dumps({"test": noxfile.TEST_REQUIREMENTS, "bench": noxfile.BENCH_REQUIREMENTS,
                  "tools": noxfile.HARNESS, "find_links": noxfile.FIND_LINKS,
                  "docs_reuses": docs.reuse_venv}))
"""


def load(repo: Path) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-c", LOAD], cwd=repo, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def test_sessions_take_the_harness_from_the_template_or_from_wheels(rendered: Render, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", COMBINATIONS[0]), tmp_path / "repo"))
    online = load(repo)
    pin = harness_requirement(repo)
    assert online["find_links"] == []
    assert online["tools"] == [pin]
    assert pin in online["test"]
    assert pin in online["bench"]

    # Offline: the wheel built elsewhere, in wheels/; no PIP_FIND_LINKS exported by hand.
    wheel = repo / "wheels" / "parity-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"")
    offline = load(repo)
    assert offline["find_links"] == ["--find-links", str(wheel.parent)]  # added to pip's own folders
    assert offline["tools"] == [str(wheel)]
    assert str(wheel) in offline["test"]
    assert pin not in offline["test"]


def test_the_docs_session_keeps_its_environment(rendered: Render) -> None:
    # Rebuilding torch and Sphinx on every `nox -s docs` made each build of the site a minute.
    assert load(rendered("cookiecutter", COMBINATIONS[0]))["docs_reuses"] is True
