"""The parity harness is a package of its own (packages/parity), released with the template: the
generated repos require it from the template's own repository at the commit they were made from,
its wheel builds from this tree, and the example of its docs page runs, with the package alone, in
a folder that is no template's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jinja2
import pytest
from packaging.requirements import Requirement

from tests.render import COMBINATIONS, ROOT, Render, harness_pin, harness_requirement, read_pyproject
from tests.wheelhouse import PARITY

VERSION = tomllib.loads((PARITY / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


@pytest.mark.parametrize("engine", ["cookiecutter", "copier"])
def test_generated_repos_pin_the_harness_at_the_template_commit(
    rendered: Render, template_repo: Path, engine: str
) -> None:
    # Never by name from an index that may not hold this release: the template's own repository.
    assert harness_requirement(rendered(engine, COMBINATIONS[0])) == harness_pin(template_repo)
    assert read_pyproject(ROOT)["project"]["version"] == VERSION, "the template and its harness are released together"


SOURCES = {
    "gh:org/template": "git+https://github.com/org/template",
    "gl:group/template": "git+https://gitlab.com/group/template",
    "git@github.com:our-lab/template.git": "git+ssh://git@github.com/our-lab/template.git",
    "https://example.org/lab/template.git": "git+https://example.org/lab/template.git",
    "git+https://example.org/lab/template": "git+https://example.org/lab/template",
    "/home/ada/template": "git+file:///home/ada/template",
}


@pytest.mark.parametrize("source", SOURCES)
def test_the_pin_reaches_the_template_wherever_it_was_typed(source: str) -> None:
    """copier's short forms, SSH, URLs and local clones: each becomes a URL pip's git support reads."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ROOT), undefined=jinja2.StrictUndefined)
    commit = "0123456789abcdef0123456789abcdef01234567"
    line = env.get_template("templates/parity-requirement.jinja").render(
        _copier_conf={"vcs_ref_hash": commit}, _copier_answers={"_src_path": source}
    )
    requirement = Requirement(line.strip().strip(",").strip('"'))
    assert requirement.name == "parity"
    assert requirement.url == f"{SOURCES[source]}@{commit}#subdirectory=packages/parity"


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
