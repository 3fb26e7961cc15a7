"""The generated README's install steps work as written, in a fresh venv of every supported Python,
from the folder as rendered: the steps make it a git repository with a first commit.

A fresh venv has the pip its Python bundles (pip 23 with Python 3.11), too old for `--group`: the
steps must upgrade it first. Nothing is prepared: the parity harness comes as the README says, from
the template's git repository at the commit the repo was rendered from (here a local clone).
Torch comes from this machine's pip configuration (the torch step's own fallback, pinned to the
generated noxfile's version), never from PyTorch's index. With the
network cut, the torch step as written tries PyTorch's index once, quickly, then that fallback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, COOKIECUTTER_JSON, Render, git
from tests.test_pre_commit import offline_prefix

pytestmark = pytest.mark.slow


def install_steps(readme: str) -> list[str]:
    """The first bash block of the README's "## Install" section, line by line."""
    section = readme.split("\n## Install\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert block, "no bash block under ## Install"
    return block.group(1).splitlines()


def torch_step(steps: list[str]) -> tuple[str, str]:
    """The torch step, and its fallback: the command after `||`, from pip's own configuration."""
    (step,) = [step for step in steps if step.startswith("pip install torch ")]
    first, separator, fallback = step.partition(" || ")
    assert separator, f"the torch step has no fallback: {step}"
    assert "--retries 0" in first, f"the torch step retries an unreachable index: {first}"
    return step, fallback


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

    steps = install_steps((repo / "README.md").read_text(encoding="utf-8"))
    step, fallback = torch_step(steps)
    assert fallback == f'pip install "torch=={pin}"', "the fallback is not the noxfile's torch"
    steps[steps.index(step)] = fallback
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


def mirror(root: Path, torch_wheel: Path) -> str:
    """A cluster's package mirror on disk: this machine's local index, and the torch wheel."""
    local = Path("/opt/pypi")
    for page in (local / "simple").glob("*/index.html"):
        target = root / "simple" / page.parent.name / "index.html"
        target.parent.mkdir(parents=True)
        target.write_text(page.read_text(encoding="utf-8").replace("../../files/", f"{local.as_uri()}/files/"))
    (root / "simple" / "torch").mkdir(exist_ok=True)
    link = f'<a href="{torch_wheel.as_uri()}">{torch_wheel.name}</a>'
    (root / "simple" / "torch" / "index.html").write_text(f"<html><body>{link}</body></html>\n", encoding="utf-8")
    return (root / "simple").as_uri()


def test_the_torch_step_does_not_wait_offline(rendered: Render, tmp_path: Path) -> None:
    """The network cut, pip configured with a mirror only (as on a cluster): the torch step as
    written tries PyTorch's index once, without retries, then installs the pinned torch from it."""
    steps = install_steps((rendered("cookiecutter", COMBINATIONS[0]) / "README.md").read_text(encoding="utf-8"))
    step, fallback = torch_step(steps)
    pin = fallback.split("==")[1].strip('"')
    wheels = sorted(Path("/opt/wheels").glob(f"torch-{pin}+cpu-cp311-*.whl"))
    python = shutil.which("python3.11")
    if not wheels or python is None or not Path("/opt/pypi/simple").is_dir():
        pytest.skip(f"needs python3.11, torch {pin}'s CPU wheel in /opt/wheels and an index in /opt/pypi")
    prefix = offline_prefix()
    subprocess.run([python, "-m", "venv", tmp_path / "venv"], check=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": mirror(tmp_path / "mirror", wheels[-1])}
    script = f"source {tmp_path / 'venv/bin/activate'} && {step}"
    started = time.perf_counter()
    result = subprocess.run([*prefix, "bash", "-c", script], capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "download.pytorch.org" in output, "PyTorch's index was not tried"
    assert "No matching distribution found for torch" in output, "the first try did not fail: no fallback"
    assert "Retrying" not in output, output
    installed = subprocess.run(
        [tmp_path / "venv/bin/python", "-m", "pip", "list", "--format", "json"], capture_output=True, text=True, env=env
    )
    versions = {package["name"]: package["version"] for package in json.loads(installed.stdout)}
    assert versions["torch"] == f"{pin}+cpu"
    print(f"the torch step, offline with a mirror: {elapsed:.1f} s, the install from the mirror included")
