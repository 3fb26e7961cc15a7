"""The license and the citation a generated repo declares: the LICENSE text of the answer, the same
SPDX identifier in pyproject.toml and CITATION.cff, and a CITATION.cff that cffconvert validates,
also for author names that are awkward to split.

cffconvert pins an old jsonschema, so it gets a virtual environment of its own, kept across runs
in pytest's cache folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.render import Combination, Render, only_child, read_pyproject, render_cookiecutter, render_copier, run

# License answer -> what its LICENSE must say, and whether the license text names the holder.
LICENSES = {
    "MIT": (["MIT License", "Permission is hereby granted, free of charge"], True),
    "BSD-3-Clause": (["BSD 3-Clause License", "3. Neither the name of the copyright holder"], True),
    "Apache-2.0": (["Apache License", "Version 2.0, January 2004", "END OF TERMS AND CONDITIONS"], False),
}
# One render per license, each with an author name that CITATION.cff must split (or not) validly.
VARIANTS = {"MIT": 'Jean "JJ" \\ Rousseau 🎉', "BSD-3-Clause": "Zoë O'Brien-Smith", "Apache-2.0": "Plato"}
CFF_AUTHORS = {
    'Jean "JJ" \\ Rousseau 🎉': {"given-names": 'Jean "JJ" \\ Rousseau', "family-names": "🎉"},
    "Zoë O'Brien-Smith": {"given-names": "Zoë", "family-names": "O'Brien-Smith"},
    "Plato": {"family-names": "Plato"},
}


def tool_venv(cache: Path, *requirements: str) -> Path:
    """A virtual environment with `requirements`, made once and reused (also by parallel workers)."""
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:16]
    venv = cache / f"venv-{key}"
    with (cache / f"venv-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a virtual environment cannot be moved once made
        if not (venv / "ready").exists():
            shutil.rmtree(venv, ignore_errors=True)
            run([sys.executable, "-m", "venv", venv])
            run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", *requirements])
            (venv / "ready").write_text("\n".join(requirements), encoding="utf-8")
    return venv


@pytest.fixture(scope="session")
def cffconvert(tool_cache: Path) -> Path:
    """cffconvert in its own environment: it pins an old jsonschema."""
    return tool_venv(tool_cache, "cffconvert==2.0.0") / "bin" / "cffconvert"


@pytest.fixture(scope="session")
def variants(template_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """license -> (cookiecutter's repo, copier's repo), each with another awkward author name."""
    renders = {}
    for license_id, author in VARIANTS.items():
        answers = {"license": license_id, "author_name": author}
        workspace = tmp_path_factory.mktemp(f"license-{license_id}")
        render_cookiecutter(template_repo, workspace / "cookiecutter", answers)
        from_copier = workspace / "copier" / "my-research-project"
        render_copier(template_repo, from_copier, answers)
        renders[license_id] = (only_child(workspace / "cookiecutter"), from_copier)
    return renders


@pytest.mark.parametrize("license_id", LICENSES)
def test_license_file_matches_the_answer(variants: dict[str, tuple[Path, Path]], license_id: str) -> None:
    from_cookiecutter, from_copier = variants[license_id]
    text = (from_cookiecutter / "LICENSE").read_text(encoding="utf-8")
    phrases, names_holder = LICENSES[license_id]
    assert all(phrase in text for phrase in phrases), text[:400]
    for other, (other_phrases, _) in LICENSES.items():
        if other != license_id:
            assert other_phrases[0] not in text.splitlines()[0]
    if names_holder:
        assert f"Copyright (c) {VARIANTS[license_id]}\n" in text
    assert "{{" not in text
    assert "{%" not in text
    for name in ("LICENSE", "CITATION.cff", "pyproject.toml"):
        assert (from_cookiecutter / name).read_bytes() == (from_copier / name).read_bytes(), name


@pytest.mark.parametrize("license_id", LICENSES)
def test_pyproject_and_citation_declare_the_spdx_license(
    variants: dict[str, tuple[Path, Path]], license_id: str
) -> None:
    repo, _ = variants[license_id]
    project = read_pyproject(repo)["project"]
    assert project["license"] == license_id
    assert not any(c.startswith("License ::") for c in project.get("classifiers", [])), "SPDX replaces these"
    citation = yaml.safe_load((repo / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["license"] == license_id


def test_citation_is_valid_and_carries_the_answers(
    rendered: Render, combination: Combination, cffconvert: Path
) -> None:
    repo = rendered("cookiecutter", combination)
    run([cffconvert, "--validate", "--infile", repo / "CITATION.cff"])
    citation = yaml.safe_load((repo / "CITATION.cff").read_text(encoding="utf-8"))
    pyproject = read_pyproject(repo)["project"]
    assert citation["title"] == "My Research Project"
    assert citation["abstract"] == pyproject["description"]
    assert citation["authors"] == [{"given-names": "Ada", "family-names": "Lovelace", "email": "ada@example.org"}]
    assert citation["repository-code"] == "https://github.com/ada-lovelace/my-research-project"


@pytest.mark.parametrize("license_id", LICENSES)
def test_citation_splits_awkward_author_names_validly(
    variants: dict[str, tuple[Path, Path]], license_id: str, cffconvert: Path
) -> None:
    repo, _ = variants[license_id]
    run([cffconvert, "--validate", "--infile", repo / "CITATION.cff"])
    citation = yaml.safe_load((repo / "CITATION.cff").read_text(encoding="utf-8"))
    (author,) = citation["authors"]
    names = {key: value for key, value in author.items() if key != "email"}
    assert names == CFF_AUTHORS[VARIANTS[license_id]]
