"""The generated README's install steps work as written, in a fresh venv of every supported Python,
from the folder as rendered: the steps make it a git repository with a first commit.

A fresh venv has the pip its Python bundles (pip 23 with Python 3.11), too old for `--group`: the
steps must upgrade it first. Torch comes from this machine's pip configuration (the README's
offline line, pinned to the generated noxfile's version), never from PyTorch's index.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, COOKIECUTTER_JSON, Render, git

pytestmark = pytest.mark.slow


def install_steps(readme: str) -> list[str]:
    """The first bash block of the README's "## Install" section, line by line."""
    section = readme.split("\n## Install\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert block, "no bash block under ## Install"
    return block.group(1).splitlines()


def offline_torch_line(readme: str, version: str) -> str:
    """The README's install line for torch from pip's own configuration, for `version`."""
    match = re.search(r'`(pip install "torch==<version>")`', readme)
    assert match, "the README tells no way to install torch without PyTorch's index"
    return match.group(1).replace("<version>", version)


def torch_pin(noxfile: Path) -> str:
    match = re.search(r'TORCH_VERSION = os.environ.get\("TORCH_VERSION", "([^"]+)"\)', noxfile.read_text())
    assert match
    return match.group(1)


def local_torch(python: str, version: str) -> str | None:
    """Why torch `version` for `python` would not come from this machine's disk, or None."""
    command = [python, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet"]
    result = subprocess.run([*command, "--report", "-", f"torch=={version}"], capture_output=True, text=True)
    if result.returncode != 0:
        return f"pip's configuration here has no torch {version} for {python}"
    (torch,) = json.loads(result.stdout)["install"]
    url = torch["download_info"]["url"]
    return None if url.startswith("file:") else f"pip would download torch for {python} from {url} (GBs)"


@pytest.mark.parametrize("version", COOKIECUTTER_JSON["python_version"])
def test_install_steps_work_as_written(rendered: Render, tmp_path: Path, version: str) -> None:
    python = f"python{version}"
    found = shutil.which(python)
    if found is None:
        pytest.skip(f"{python} is not on PATH here")
    probe = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"{python} on PATH does not run here: {probe.stderr.strip().splitlines()[0]}")
    source = rendered("cookiecutter", COMBINATIONS[0])  # the oldest Python: every version supported
    pin = torch_pin(source / "noxfile.py")
    if reason := local_torch(python, pin):
        pytest.skip(reason)
    repo = Path(shutil.copytree(source, tmp_path / "repo"))  # as rendered: the steps make the repository

    readme = (repo / "README.md").read_text(encoding="utf-8")
    steps = install_steps(readme)
    (torch_step,) = [step for step in steps if step.startswith("pip install torch ")]
    steps[steps.index(torch_step)] = offline_torch_line(readme, pin)
    # `python` is the Python under test until the venv is activated, as on a machine that has one.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(found)
    script = "\n".join(
        [
            "set -euo pipefail",
            f'export PATH="{bin_dir}:$PATH"',
            *steps,
            "python -m pip --version",
            "python -m pytest -q -x -p no:cacheprovider",
        ]
    )
    result = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{script}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    assert (repo / ".git" / "hooks" / "pre-commit").is_file()
    assert git(repo, "log", "--format=%s") == "Start from the template", "not one first commit"
    assert f"(python {version})" in result.stdout  # `pip --version`: the venv's pip, on that Python
