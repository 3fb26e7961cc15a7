"""Shared fixtures: a tagged snapshot of the template, and renders cached for the session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.render import (
    COMBINATIONS,
    Combination,
    Render,
    only_child,
    render_cookiecutter,
    render_copier,
    snapshot_template,
)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's ~/.cookiecutterrc, ~/.cookiecutter_replay and git config out of the tests."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.org")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.org")


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repo's working tree as a tagged git repository (what `gh:org/template` would be)."""
    return snapshot_template(tmp_path_factory.mktemp("template"))


@pytest.fixture(scope="session")
def rendered(template_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Render:
    """rendered(engine, combination) -> the generated repo, rendered once per session."""
    cache: dict[tuple[str, Combination], Path] = {}

    def render(engine: str, combination: Combination) -> Path:
        if (engine, combination) not in cache:
            out = tmp_path_factory.mktemp(f"{engine}-{combination.id}")
            if engine == "cookiecutter":
                render_cookiecutter(template_repo, out, combination.answers)
                cache[engine, combination] = only_child(out)
            else:
                render_copier(template_repo, out / "my-research-project", combination.answers)
                cache[engine, combination] = out / "my-research-project"
        return cache[engine, combination]

    return render


@pytest.fixture(params=COMBINATIONS, ids=lambda combination: combination.id)
def combination(request: pytest.FixtureRequest) -> Combination:
    param: Combination = request.param
    return param


@pytest.fixture
def repo(rendered: Render, combination: Combination, tmp_path: Path) -> Path:
    """A private copy of the combination's render, to run tools in and change freely."""
    return Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the session: torch's stubs are analysed once (~30 s), not per repo."""
    return tmp_path_factory.mktemp("mypy-cache")
