"""The generated README is short and covers what a researcher needs first, with the rest in the docs
site's guide; everything README and guide name exists: the paths in the README's tables, the pages
it links to, the nox sessions and scripts they run, the GPU runner label they ask for. This repo's
own README stays short too: one current figure per cell, the history in docs/measurements.md."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml
from parity_tools.cli import COMMANDS

from tests.render import ROOT, Combination, Render, run, workflow_files

README_SECTIONS = [
    "## What is inside",
    "## Who owns which file",
    "## Install",
    "## Run the tests",
    "## The dispatch pattern",
    "## Add an algorithm",
    "## Train: one process, several, a Slurm cluster",
    "## Sweeps and results",
    "## Benchmark",
    "## How to cite",
    "## Update from the template",
]
#: The guide's pages (docs/guide/), each with a section the README used to hold.
GUIDE_SECTIONS = {
    "dispatch.md": ["## Two ways to dispatch"],
    "tests.md": ["## When a test fails"],
    "add-an-algorithm.md": ["# Add an algorithm"],
    "training.md": ["# Train: one process, several, a Slurm cluster"],
    "sweeps.md": ["# Sweeps and results"],
    "benchmarks.md": ["# Benchmark"],
    "updating.md": ["## The weekly template-update pull request", "## Change an answer later"],
}
#: A ten-minute read (about 200 words a minute, code included).
README_WORDS = 1200
#: This repo's README: what the template is, how to use and develop it, its current figures.
TEMPLATE_README_WORDS = 2500


def guide(repo: Path) -> dict[str, str]:
    return {page.name: page.read_text(encoding="utf-8") for page in sorted((repo / "docs" / "guide").glob("*.md"))}


def test_readme_covers_what_a_researcher_needs(rendered: Render, combination: Combination) -> None:
    """Sections in order, who owns which file before the install, and at most a ten-minute read."""
    repo = rendered("cookiecutter", combination)
    readme = (repo / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# My Research Project\n")
    found = [line for line in readme.splitlines() if line.startswith("## ")]
    assert [section for section in found if section in README_SECTIONS] == README_SECTIONS, found
    words = len(readme.split())
    assert words <= README_WORDS, f"the README has {words} words; move text into docs/guide/"
    assert "CITATION.cff" in readme
    assert "nox -s docs" in readme


def test_the_guide_holds_the_rest(rendered: Render, combination: Combination) -> None:
    """Every page the README links to exists; the guide's pages hold the sections that moved."""
    repo = rendered("cookiecutter", combination)
    readme = (repo / "README.md").read_text(encoding="utf-8")
    linked = {link.partition("#")[0] for link in re.findall(r"\]\(((?:docs/)[^)]+)\)", readme)}
    missing = sorted(link for link in linked if not (repo / link).is_file())
    assert not missing, f"the README links to pages that do not exist: {missing}"
    pages = guide(repo)
    assert {f"docs/guide/{name}" for name in GUIDE_SECTIONS} <= linked, "a guide page the README does not link"
    for name, sections in GUIDE_SECTIONS.items():
        absent = [section for section in sections if f"{section}\n" not in pages[name]]
        assert not absent, f"docs/guide/{name} lacks {absent}"
    assert "copier update --defaults" in pages["updating.md"]


def test_readme_names_only_what_exists(rendered: Render, combination: Combination) -> None:
    """The paths, nox sessions, scripts and GPU runner label the README and the guide name are real."""
    repo = rendered("cookiecutter", combination)
    readme = (repo / "README.md").read_text(encoding="utf-8")
    text = "\n".join([readme, *guide(repo).values()])
    tables = "\n".join(line for line in readme.splitlines() if line.startswith("| "))
    # Paths from the repo's root (`api.py` and the like name files inside an algorithm's folder).
    paths = {path for path in re.findall(r"`([\w./-]+)`", tables) if "/" in path or path.startswith(".")}
    paths |= {"README.md", "CITATION.cff", "LICENSE", "pyproject.toml", "noxfile.py"}
    missing = sorted(path for path in paths if not (repo / path).exists())
    assert not missing, f"the README's tables name files the repo does not have: {missing}"
    listing = run([sys.executable, "-m", "nox", "--noxfile", repo / "noxfile.py", "--list"]).stdout
    sessions = set(re.findall(r"^[*-] (\w+)", listing, flags=re.MULTILINE))  # * default, - opt-in
    for session in re.findall(r"nox (?:--no-venv --no-install )?-s (\w+)", text):
        assert session in sessions, f"the docs run `nox -s {session}`; the noxfile has {sorted(sessions)}"
    for command in re.findall(r"^parity (\w+)", text, flags=re.MULTILINE):
        assert command in COMMANDS, f"the docs run `parity {command}`; it has {sorted(COMMANDS)}"
    runners = [
        job["runs-on"]
        for workflow in workflow_files(repo)
        for job in yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"].values()
    ]
    assert ["self-hosted", "gpu"] in runners, "the guide tells to register a runner labelled `gpu`"


def test_this_repos_readme_is_short() -> None:
    words = len((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert words <= TEMPLATE_README_WORDS, f"README.md has {words} words; move history to docs/measurements.md"


def test_what_is_inside_names_every_module(rendered: Render, combination: Combination) -> None:
    """Each file of the package is in the table, by its path or, inside an algorithm's row, by name
    (a repo with Triton has kernel files the table once left out)."""
    repo = rendered("cookiecutter", combination)
    readme = (repo / "README.md").read_text(encoding="utf-8")
    table = readme.split("## What is inside\n", 1)[1].split("\n## ", 1)[0]
    package = next((repo / "src").iterdir())
    modules = [path for path in package.rglob("*.py") if path.name not in {"__init__.py", "_dispatch.py"}]
    unnamed = sorted(
        path.relative_to(repo).as_posix()
        for path in modules
        if f"`{path.relative_to(repo).as_posix()}`" not in table
        and not (path.parent != package and f"`{path.name}`" in table)
    )
    assert not unnamed, f"the README's 'What is inside' does not name {unnamed}"
