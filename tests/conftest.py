"""Shared fixtures: a tagged snapshot of the template, renders cached for the session, tool caches, and
the repos that test_update.py and test_update_answers.py update from v1.0.0 to v2.0.0 (tests/updating.py)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.render import (
    COMBINATIONS,
    COPIER_YML,
    Combination,
    Render,
    commit_all,
    generate,
    git,
    only_child,
    render_cookiecutter,
    render_copier,
    run,
    snapshot_template,
)
from tests.slurm_cluster import Cluster, two_node_cluster, why_no_cluster
from tests.updating import CONFLICTING_EDITS, CONVENTION_CHANGES, ENGINES, drop_softmax, work_on
from tests.wheelhouse import build, given


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
def parity_wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding parity's wheel from this tree: the one nox's tests session built and named
    in PIP_FIND_LINKS, else one built here."""
    found = given()
    if found is not None:
        return found
    folder = tmp_path_factory.mktemp("wheelhouse")
    build(folder)
    return folder


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


@pytest.fixture(scope="session")
def oldest_copier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `copier` command of the oldest release copier.yml admits (`_min_copier_version`)."""
    venv = tmp_path_factory.mktemp("oldest-copier")
    run([sys.executable, "-m", "venv", venv])
    run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"copier=={COPIER_YML['_min_copier_version']}"])
    return venv / "bin" / "copier"


@pytest.fixture(scope="session")
def tool_cache(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder kept between test runs for tool environments (pytest's cache, else a temp folder)."""
    cache = getattr(pytestconfig, "cache", None)
    if cache is None:
        return tmp_path_factory.mktemp("ecosystem-tools")
    return Path(cache.mkdir("ecosystem-tools"))


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A real two-node Slurm cluster on this machine (tests/slurm_cluster.py), one per test module:
    it starts in about a second; it skips, saying why, without Slurm, root or network namespaces."""
    reason = why_no_cluster()
    if reason is not None:
        pytest.skip(reason)
    with two_node_cluster(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


# `copier update` from v1.0.0 to v2.0.0 -------------------------------------------------------------


@pytest.fixture(scope="session")
def template_v1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree tagged v1.0.0; the `v2` fixture adds its v2.0.0 release."""
    return snapshot_template(tmp_path_factory.mktemp("template"), tag="v1.0.0")


@pytest.fixture(scope="session")
def repos(template_v1: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every repo the tests update, generated from v1.0.0 before v2.0.0 exists."""
    made = {}
    for engine in ENGINES:
        for combination in COMBINATIONS:
            repo = generate(template_v1, engine, tmp_path_factory.mktemp(f"{engine}-{combination.id}"), combination)
            work_on(repo, combination)
            made[f"{engine}-{combination.id}"] = repo
    for engine, layout in [("copier", "split"), ("cookiecutter", "single")]:
        combination = Combination(layout, jax=False)
        for answer in ("jax", "triton"):
            made[f"{engine}-{layout}-to-{answer}"] = generate(
                template_v1, engine, tmp_path_factory.mktemp(f"{engine}-{layout}-to-{answer}"), combination
            )
    for engine in ENGINES:
        for layout in ("single", "split"):
            combination = Combination(layout, jax=False)
            repo = generate(template_v1, engine, tmp_path_factory.mktemp(f"{engine}-{layout}-relayout"), combination)
            work_on(repo, combination)
            made[f"{engine}-{layout}-relayout"] = repo
    for combination in [Combination("single", jax=False), Combination("split", jax=True)]:
        repo = generate(template_v1, "copier", tmp_path_factory.mktemp(f"{combination.id}-deleted"), combination)
        drop_softmax(repo, combination)
        made[f"copier-{combination.id}-deleted"] = repo
    renamed = generate(template_v1, "copier", tmp_path_factory.mktemp("rename"), COMBINATIONS[0])
    work_on(renamed, COMBINATIONS[0])
    made["copier-single-rename"] = renamed  # then renamed as the generated README says
    conflicting = generate(template_v1, "copier", tmp_path_factory.mktemp("conflict"), COMBINATIONS[0])
    for edit in CONFLICTING_EDITS:
        edit.apply(conflicting)
    commit_all(conflicting, "our own settings")
    made["conflict"] = conflicting
    return made


@pytest.fixture(scope="session")
def v2(template_v1: Path, repos: dict[str, Path]) -> dict[str, Path]:
    """The template after its v2.0.0 release; returns the repos made from v1.0.0."""
    for change in CONVENTION_CHANGES:
        change.apply(template_v1 / "template")
    commit_all(template_v1, "v2: new conventions")
    git(template_v1, "tag", "v2.0.0")
    return repos
