"""The generated README covers what a researcher needs, and everything it names exists: the paths
in its tables, the nox sessions and scripts it runs, the GPU runner label it asks for."""

from __future__ import annotations

import re
import sys

import yaml

from tests.render import Combination, Render, run, workflow_files

README_SECTIONS = [
    "## What is inside",
    "## Install",
    "## Run the tests",
    "## The dispatch pattern",
    "## Add an algorithm",
    "## Sweeps and results",
    "## How to cite",
    "## Update from the template",
    "### Who owns which file",
]


def test_readme_covers_what_a_researcher_needs(rendered: Render, combination: Combination) -> None:
    repo = rendered("cookiecutter", combination)
    readme = (repo / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# My Research Project\n")
    missing = [section for section in README_SECTIONS if f"\n{section}\n" not in readme]
    assert not missing, missing
    assert "copier update --defaults" in readme
    assert "CITATION.cff" in readme


def test_readme_names_only_what_exists(rendered: Render, combination: Combination) -> None:
    """The paths, nox sessions, scaffold script and GPU runner label the README names are real."""
    repo = rendered("cookiecutter", combination)
    readme = (repo / "README.md").read_text(encoding="utf-8")
    tables = "\n".join(line for line in readme.splitlines() if line.startswith("| "))
    # Paths from the repo's root (`api.py` and the like name files inside an algorithm's folder).
    paths = {path for path in re.findall(r"`([\w./-]+)`", tables) if "/" in path or path.startswith(".")}
    paths |= {"README.md", "CITATION.cff", "LICENSE", "pyproject.toml", "noxfile.py"}
    missing = sorted(path for path in paths if not (repo / path).exists())
    assert not missing, f"the README's tables name files the repo does not have: {missing}"
    listing = run([sys.executable, "-m", "nox", "--noxfile", repo / "noxfile.py", "--list"]).stdout
    sessions = set(re.findall(r"^[*-] (\w+)", listing, flags=re.MULTILINE))  # * default, - opt-in
    for session in re.findall(r"nox (?:--no-venv --no-install )?-s (\w+)", readme):
        assert session in sessions, f"README runs `nox -s {session}`; the noxfile has {sorted(sessions)}"
    for script in re.findall(r"python (scripts/\S+\.py)", readme):
        assert (repo / script).is_file(), script
    runners = [
        job["runs-on"]
        for workflow in workflow_files(repo)
        for job in yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"].values()
    ]
    assert ["self-hosted", "gpu"] in runners, "README tells to register a runner labelled `gpu`"
