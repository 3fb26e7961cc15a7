"""A generated repo passes the Scientific Python ecosystem's own reviews on day one.

Every tool runs for real, on every combination of options: sp-repo-review, validate-pyproject,
check-jsonschema (GitHub's workflow schema), zizmor, cffconvert, and the generated
`.pre-commit-config.yaml` through pre-commit itself.

pre-commit cannot clone hook repositories here (the network reaches package registries only), so
`offline_config` turns each remote hook into a local `language: python` hook that pip-installs the
same package at the pinned `rev` from PyPI, with the entry and file types of that repository's
hook manifest (restated in HOOK_MANIFESTS). Ids, arguments and file filters are the generated
config's own, and its `repo: local` hooks run unchanged.

Tools with conflicting dependencies (cffconvert pins an old jsonschema) get their own virtual
environment, cached across runs in pytest's cache folder like pre-commit's hook environments.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.render import BIN, Combination, Render, git, only_child, render_cookiecutter, render_copier, run

SINGLE = Combination("single", jax=False)

# The hook manifests (`.pre-commit-hooks.yaml`) of the repositories the generated config uses, as
# published at the pinned revs: repository -> (PyPI package, {hook id: manifest entry}).
HOOK_MANIFESTS: dict[str, tuple[str, dict[str, dict[str, Any]]]] = {
    "https://github.com/pre-commit/pre-commit-hooks": (
        "pre-commit-hooks",
        {
            "check-added-large-files": {"entry": "check-added-large-files"},
            "check-case-conflict": {"entry": "check-case-conflict"},
            "check-merge-conflict": {"entry": "check-merge-conflict", "types": ["text"]},
            "check-toml": {"entry": "check-toml", "types": ["toml"]},
            "check-yaml": {"entry": "check-yaml", "types": ["yaml"]},
            "debug-statements": {"entry": "debug-statement-hook", "types": ["python"]},
            "end-of-file-fixer": {"entry": "end-of-file-fixer", "types": ["text"]},
            "mixed-line-ending": {"entry": "mixed-line-ending", "types": ["text"]},
            "trailing-whitespace": {"entry": "trailing-whitespace-fixer", "types": ["text"]},
        },
    ),
    "https://github.com/astral-sh/ruff-pre-commit": (
        "ruff",
        {
            "ruff-check": {
                "entry": "ruff check --force-exclude",
                "types_or": ["python", "pyi", "jupyter"],
                "require_serial": True,
            },
            "ruff-format": {
                "entry": "ruff format --force-exclude",
                "types_or": ["python", "pyi", "jupyter"],
                "require_serial": True,
            },
        },
    ),
    "https://github.com/codespell-project/codespell": (
        "codespell",
        {"codespell": {"entry": "codespell", "types": ["text"]}},
    ),
    "https://github.com/kynan/nbstripout": (
        "nbstripout",
        {"nbstripout": {"entry": "nbstripout", "types": ["jupyter"]}},
    ),
    "https://github.com/zizmorcore/zizmor-pre-commit": (
        "zizmor",
        {"zizmor": {"entry": "zizmor", "types": ["yaml"], "require_serial": True}},
    ),
}

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
README_SECTIONS = [
    "## What is inside",
    "## Install",
    "## Run the tests",
    "## The dispatch pattern",
    "## Add an algorithm",
    "## How to cite",
    "## Update from the template",
    "### Who owns which file",
]


# Helpers ----------------------------------------------------------------------------------------


def venv_bin(venv: Path) -> Path:
    return venv / "bin"


def tool_venv(cache: Path, *requirements: str) -> Path:
    """A virtual environment with `requirements`, made once and reused (also by parallel workers)."""
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:16]
    venv = cache / f"venv-{key}"
    with (cache / f"venv-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a virtual environment cannot be moved once made
        if not (venv / "ready").exists():
            shutil.rmtree(venv, ignore_errors=True)
            run([sys.executable, "-m", "venv", venv])
            run([venv_bin(venv) / "python", "-m", "pip", "install", "--quiet", *requirements])
            (venv / "ready").write_text("\n".join(requirements), encoding="utf-8")
    return venv


def fresh_git_repo(rendered_repo: Path, dest: Path) -> Path:
    """A copy of a generated repo, as a user has it after `git init && git add -A`."""
    shutil.copytree(rendered_repo, dest, symlinks=True)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    return dest


def offline_config(config: dict[str, Any]) -> dict[str, Any]:
    """The generated pre-commit config with each remote hook made a local `language: python` hook
    that installs the hook's package at the pinned rev (see the module docstring)."""
    repos = []
    for repo in config["repos"]:
        if repo["repo"] in {"local", "meta"}:
            repos.append(repo)
            continue
        assert repo["repo"] in HOOK_MANIFESTS, f"add the hook manifest of {repo['repo']} to HOOK_MANIFESTS"
        package, manifest = HOOK_MANIFESTS[repo["repo"]]
        version = repo["rev"].removeprefix("v")
        hooks = []
        for hook in repo["hooks"]:
            assert hook["id"] in manifest, f"add {hook['id']} of {repo['repo']} to HOOK_MANIFESTS"
            hooks.append(
                {
                    "name": hook["id"],
                    "language": "python",
                    **manifest[hook["id"]],
                    **hook,
                    "additional_dependencies": [
                        f"{package}=={version}",
                        *hook.get("additional_dependencies", []),
                    ],
                }
            )
        repos.append({"repo": "local", "hooks": hooks})
    return {**config, "repos": repos}


def pre_commit(
    repo: Path, home: Path, *args: str, skip: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pre-commit run <args>` in `repo` with its offline config; the exit status is left to the caller."""
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    offline = repo.parent / f"{repo.name}.offline-pre-commit-config.yaml"
    offline.write_text(yaml.safe_dump(offline_config(config), sort_keys=False), encoding="utf-8")
    environment = {
        **os.environ,
        **(env or {}),
        "PRE_COMMIT_HOME": str(home),
        # `language: system` hooks (mypy) find the tools of the interpreter running these tests.
        "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")]),
        "SKIP": ",".join(skip),
    }
    return subprocess.run(
        [BIN / "pre-commit", "run", "--config", offline, "--color", "never", *args],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def repo_review(repo: Path) -> dict[str, Any]:
    """sp-repo-review's report (it exits non-zero when a check fails: the caller says which)."""
    result = subprocess.run(
        [BIN / "sp-repo-review", repo, "--format", "json"], capture_output=True, text=True, check=False
    )
    assert result.stdout.startswith("{"), result.stdout + result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def read_pyproject(repo: Path) -> dict[str, Any]:
    return tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))


# Fixtures ---------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tool_cache(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder kept between test runs for tool environments (pytest's cache, else a temp folder)."""
    cache = getattr(pytestconfig, "cache", None)
    if cache is None:
        return tmp_path_factory.mktemp("ecosystem-tools")
    return Path(cache.mkdir("ecosystem-tools"))


@pytest.fixture(scope="session")
def cffconvert(tool_cache: Path) -> Path:
    """cffconvert in its own environment: it pins an old jsonschema."""
    return venv_bin(tool_venv(tool_cache, "cffconvert==2.0.0")) / "cffconvert"


@pytest.fixture(scope="session")
def pre_commit_home(tool_cache: Path) -> Path:
    return tool_cache / "pre-commit"


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


# sp-repo-review, validate-pyproject ---------------------------------------------------------------


def test_sp_repo_review_passes(rendered: Render, combination: Combination) -> None:
    """Every applicable check passes; the ones we disagree with are ignored with a reason."""
    repo = rendered("cookiecutter", combination)
    report = repo_review(repo)
    failed = {
        name: f"{check['description']}: {check['err_msg'].strip()}"
        for name, check in report["checks"].items()
        if check["result"] is False
    }
    assert not failed, json.dumps(failed, indent=2, ensure_ascii=False)


def test_repo_review_ignores_give_their_reasons(rendered: Render) -> None:
    """`[tool.repo-review] ignore` is a table: each ignored check with the reason next to it."""
    repo = rendered("cookiecutter", SINGLE)
    ignore = read_pyproject(repo).get("tool", {}).get("repo-review", {}).get("ignore", {})
    assert isinstance(ignore, dict), 'write `ignore = {CHECK = "reason"}`, not a bare list'
    assert all(isinstance(reason, str) and reason.strip() for reason in ignore.values()), ignore
    report = repo_review(repo)
    for name, reason in ignore.items():
        assert report["checks"][name]["skip_reason"] == reason


def test_validate_pyproject_accepts_pyproject(rendered: Render, combination: Combination) -> None:
    run([BIN / "validate-pyproject", rendered("cookiecutter", combination) / "pyproject.toml"])


# GitHub workflows --------------------------------------------------------------------------------


def workflow_files(repo: Path) -> list[Path]:
    workflows = repo / ".github" / "workflows"
    return sorted([*workflows.glob("*.yml"), *workflows.glob("*.yaml")])


def test_workflows_match_github_schema(rendered: Render, combination: Combination) -> None:
    repo = rendered("cookiecutter", combination)
    workflows = workflow_files(repo)
    assert workflows, "the generated repo has no GitHub workflow"
    run([BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows])
    dependabot = repo / ".github" / "dependabot.yml"
    if dependabot.exists():
        run([BIN / "check-jsonschema", "--builtin-schema", "vendor.dependabot", dependabot])


def test_zizmor_finds_nothing_of_medium_severity_or_above(rendered: Render, combination: Combination) -> None:
    repo = rendered("cookiecutter", combination)
    assert workflow_files(repo), "the generated repo has no GitHub workflow"
    result = subprocess.run(
        [BIN / "zizmor", "--offline", "--format", "json", repo], capture_output=True, text=True, check=False
    )
    findings = json.loads(result.stdout)
    serious = [
        f"{finding['ident']} ({finding['determinations']['severity']}): {finding['desc']} in "
        f"{finding['locations'][0]['symbolic']['key']}"
        for finding in findings
        if finding["determinations"]["severity"] in {"Medium", "High"}
    ]
    assert not serious, "\n".join(serious)


# License and citation ----------------------------------------------------------------------------


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


# pre-commit ---------------------------------------------------------------------------------------


def test_pre_commit_config_is_valid_and_pinned(rendered: Render) -> None:
    repo = rendered("cookiecutter", SINGLE)
    run([BIN / "pre-commit", "validate-config", repo / ".pre-commit-config.yaml"])
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    for remote in (repo for repo in config["repos"] if repo["repo"] not in {"local", "meta"}):
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", remote["rev"]), f"pin {remote['repo']} to a release"


def test_pre_commit_passes_on_a_fresh_repo(
    rendered: Render, combination: Combination, tmp_path: Path, pre_commit_home: Path
) -> None:
    """Every hook of the generated config, mypy aside (next test), passes without changing a file."""
    repo = fresh_git_repo(rendered("cookiecutter", combination), tmp_path / "repo")
    result = pre_commit(repo, pre_commit_home, "--all-files", "--show-diff-on-failure", skip=("mypy",))
    assert result.returncode == 0, result.stdout + result.stderr


def test_pre_commit_type_check_passes(
    rendered: Render, combination: Combination, tmp_path: Path, pre_commit_home: Path, tool_cache: Path
) -> None:
    """The mypy hook runs in the developer's environment, which needs the project's dependencies."""
    missing = [name for name in ["numpy", "torch", "jax"][: 3 if combination.jax else 2] if not find_spec(name)]
    if missing:
        pytest.skip(f"the mypy hook type-checks against {', '.join(missing)}: install them to run it")
    repo = fresh_git_repo(rendered("cookiecutter", combination), tmp_path / "repo")
    # mypy's own cache, kept between runs: analysing torch's types takes most of the time.
    cache = {"MYPY_CACHE_DIR": str(tool_cache / f"mypy-{combination.id}")}
    result = pre_commit(repo, pre_commit_home, "mypy", "--all-files", env=cache)
    assert result.returncode == 0, result.stdout + result.stderr


CONFLICT = "<<<<<<< before updating\nmine\n=======\ntheirs\n>>>>>>> after updating\n"


@pytest.mark.parametrize(
    ("hook", "path", "content"),
    [
        ("check-merge-conflict", "README.md", CONFLICT),
        ("copier-update-conflicts", "README.md", CONFLICT),
        ("copier-update-rejects", "noxfile.py.rej", "@@ -1 +1 @@\n"),
    ],
    ids=["check-merge-conflict", "copier-update-conflicts", "copier-update-rejects"],
)
def test_pre_commit_refuses_what_copier_update_leaves_unresolved(
    rendered: Render, tmp_path: Path, pre_commit_home: Path, hook: str, path: str, content: str
) -> None:
    """`copier update` exits 0 with conflict markers (outside a git merge) or .rej files left."""
    repo = fresh_git_repo(rendered("cookiecutter", SINGLE), tmp_path / "repo")
    with (repo / path).open("a", encoding="utf-8") as file:
        file.write(content)
    git(repo, "add", "-A")
    result = pre_commit(repo, pre_commit_home, hook, "--all-files")
    assert result.returncode == 1, result.stdout + result.stderr
    assert path in result.stdout


# README, .gitignore, editor settings ----------------------------------------------------------------


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


def test_gitignore_keeps_research_artefacts_out(rendered: Render, combination: Combination, tmp_path: Path) -> None:
    repo = fresh_git_repo(rendered("cookiecutter", combination), tmp_path / "repo")
    assert "!!" not in git(repo, "status", "--porcelain", "--ignored"), "it ignores a generated file"
    artefacts = {
        "data/train.csv",
        "checkpoints/epoch-3.pt",
        "model.ckpt",
        "weights.safetensors",
        "outputs/2024-05-01/run.log",
        "wandb/run-1/files",
        "lightning_logs/version_0",
        "notebooks/.ipynb_checkpoints/a-checkpoint.ipynb",
        ".venv/bin/python",
        "src/pkg/__pycache__/mod.cpython-311.pyc",
    }
    kept = {"tests/data/reference.npz", "src/pkg/data/__init__.py", "notebooks/explore.ipynb"}
    check = subprocess.run(
        ["git", "-C", repo, "check-ignore", "--no-index", *sorted(artefacts | kept)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert set(check.stdout.split()) == artefacts, check.stdout


def test_editorconfig_agrees_with_ruff(rendered: Render) -> None:
    repo = rendered("cookiecutter", SINGLE)
    editorconfig = (repo / ".editorconfig").read_text(encoding="utf-8")
    line_length = read_pyproject(repo)["tool"]["ruff"]["line-length"]
    assert f"max_line_length = {line_length}\n" in editorconfig
