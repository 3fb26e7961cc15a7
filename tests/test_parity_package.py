"""The parity harness is a package of its own (packages/parity), released with the template: the
generated repos pin its version, its wheel builds from this tree and installs from a local folder,
and the example of its docs page runs, with the package alone, in a folder that is no template's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

from tests.render import ROOT, read_pyproject
from tests.wheelhouse import PARITY

VERSION = tomllib.loads((PARITY / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_generated_repos_pin_this_release() -> None:
    template = (ROOT / "template" / "pyproject.toml").read_text(encoding="utf-8")  # Jinja: not yet TOML
    pins = [Requirement(spec) for spec in re.findall(r'^  "(parity\W.*)",', template, re.MULTILINE)]
    assert [str(pin.specifier) for pin in pins] == [f"=={VERSION}"]
    assert read_pyproject(ROOT)["project"]["version"] == VERSION, "the template and its harness are released together"


def test_the_docs_example_passes_with_the_wheel_alone(parity_wheelhouse: Path, tmp_path: Path) -> None:
    (wheel,) = parity_wheelhouse.glob(f"parity-{VERSION}-*.whl")
    installed = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(installed), str(wheel)]
    subprocess.run(pip, check=True)
    (example,) = re.findall(r"```python\n(.*?)```", (PARITY / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    project = tmp_path / "any-repo"  # no pyproject.toml, no src/: a repo the template did not make
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # its own, wherever tmp_path is
    (project / "test_logsumexp.py").write_text(example, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-W", "error"]
    env = {"PYTHONPATH": str(installed), "HYPOTHESIS_PROFILE": "ci", "PATH": str(Path(sys.executable).parent)}
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    # The plugin came from the wheel: its report line, and its count of compared calls.
    assert f"parity-{VERSION}" in result.stdout
    assert "test_matches_reference[torch-float32-cpu] PASSED (10 compared)" in result.stdout
    assert re.search(r"test_gradient\[torch-float64-cpu\] PASSED \(\d+ compared\)", result.stdout), result.stdout


def test_dependabot_proposes_only_patch_releases_of_parity() -> None:
    # Minor releases come with the template's conventions, through `copier update`.
    config = yaml.safe_load((ROOT / "template" / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    (pip,) = [update for update in config["updates"] if update["package-ecosystem"] == "pip"]
    assert pip["allow"] == [{"dependency-name": "parity"}]
    (ignored,) = pip["ignore"]
    assert set(ignored["update-types"]) == {"version-update:semver-major", "version-update:semver-minor"}
