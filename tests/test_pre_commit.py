"""The generated `.pre-commit-config.yaml`, run by pre-commit itself on every combination: valid and
pinned, passing on a fresh repo, and refusing what `copier update` leaves unresolved.

pre-commit cannot clone hook repositories here (the network reaches package registries only). So
`offline_config` reads the real config and turns each remote hook into a `repo: local` hook of
`language: python` that pip-installs the repository's package (its name without `-pre-commit`)
at the config's `rev`; ids, arguments and file filters are the config's own, and its local hooks
run unchanged. What a hook repository's manifest adds, the command and the file types, is in
HOOK_TOOLS by hook id, and a test fails when the config and HOOK_TOOLS name different hooks: a
bumped `rev` installs the bumped tool, a new hook needs its line here.
"""

from __future__ import annotations

import os
import re
import subprocess
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.render import BIN, COMBINATIONS, Combination, Render, fresh_git_repo, git, run

# Hook id -> the command its package installs, and the files it reads (from its manifest,
# `.pre-commit-hooks.yaml`, in the repository the config names).
HOOK_TOOLS: dict[str, dict[str, Any]] = {
    # https://github.com/pre-commit/pre-commit-hooks
    "check-added-large-files": {"entry": "check-added-large-files"},
    "check-case-conflict": {"entry": "check-case-conflict"},
    "check-merge-conflict": {"entry": "check-merge-conflict", "types": ["text"]},
    "check-toml": {"entry": "check-toml", "types": ["toml"]},
    "check-yaml": {"entry": "check-yaml", "types": ["yaml"]},
    "debug-statements": {"entry": "debug-statement-hook", "types": ["python"]},
    "end-of-file-fixer": {"entry": "end-of-file-fixer", "types": ["text"]},
    "mixed-line-ending": {"entry": "mixed-line-ending", "types": ["text"]},
    "trailing-whitespace": {"entry": "trailing-whitespace-fixer", "types": ["text"]},
    # https://github.com/astral-sh/ruff-pre-commit
    "ruff-check": {"entry": "ruff check --force-exclude", "types_or": ["python", "pyi", "jupyter"]},
    "ruff-format": {"entry": "ruff format --force-exclude", "types_or": ["python", "pyi", "jupyter"]},
    # https://github.com/codespell-project/codespell
    "codespell": {"entry": "codespell", "types": ["text"]},
    # https://github.com/kynan/nbstripout
    "nbstripout": {"entry": "nbstripout", "types": ["jupyter"]},
    # https://github.com/zizmorcore/zizmor-pre-commit
    "zizmor": {"entry": "zizmor", "types": ["yaml"]},
}
SINGLE = COMBINATIONS[0]
CONFLICT = "<<<<<<< before updating\nmine\n=======\ntheirs\n>>>>>>> after updating\n"


def read_config(repo: Path) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return config


def remote_repos(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The repositories pre-commit would clone (not `local` or `meta`)."""
    return [repo for repo in config["repos"] if repo["repo"] not in {"local", "meta"}]


def offline_hook(repo: dict[str, Any], hook: dict[str, Any]) -> dict[str, Any]:
    """`hook` of the remote `repo` as a local hook that installs the repo's package at its `rev`."""
    assert hook["id"] in HOOK_TOOLS, f"the config runs {hook['id']} of {repo['repo']}: add it to HOOK_TOOLS"
    package = repo["repo"].rstrip("/").rsplit("/", 1)[-1].removesuffix("-pre-commit")
    requirement = f"{package}=={repo['rev'].removeprefix('v')}"
    return {
        "name": hook["id"],
        "language": "python",
        **HOOK_TOOLS[hook["id"]],
        **hook,
        "additional_dependencies": [requirement, *hook.get("additional_dependencies", [])],
    }


def offline_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config with each remote hook made local (see the module docstring)."""
    remote = remote_repos(config)
    repos = [
        {"repo": "local", "hooks": [offline_hook(repo, hook) for hook in repo["hooks"]]} if repo in remote else repo
        for repo in config["repos"]
    ]
    return {**config, "repos": repos}


def pre_commit(
    repo: Path, home: Path, *args: str, skip: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pre-commit run <args>` in `repo` with its offline config; the exit status is left to the caller."""
    offline = repo.parent / f"{repo.name}.offline-pre-commit-config.yaml"
    offline.write_text(yaml.safe_dump(offline_config(read_config(repo)), sort_keys=False), encoding="utf-8")
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


@pytest.fixture(scope="session")
def pre_commit_home(tool_cache: Path) -> Path:
    return tool_cache / "pre-commit"


def test_pre_commit_config_is_valid_and_pinned(rendered: Render) -> None:
    repo = rendered("cookiecutter", SINGLE)
    run([BIN / "pre-commit", "validate-config", repo / ".pre-commit-config.yaml"])
    for remote in remote_repos(read_config(repo)):
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", remote["rev"]), f"pin {remote['repo']} to a release"


def test_every_remote_hook_has_its_tool_and_no_other(rendered: Render) -> None:
    """HOOK_TOOLS follows the config: a hook added to it, or removed, must be added or removed here."""
    config = read_config(rendered("cookiecutter", SINGLE))
    hooks = {hook["id"] for repo in remote_repos(config) for hook in repo["hooks"]}
    assert sorted(hooks - set(HOOK_TOOLS)) == [], "hooks the tests cannot run offline: add them to HOOK_TOOLS"
    assert sorted(set(HOOK_TOOLS) - hooks) == [], "HOOK_TOOLS names hooks the config no longer has"


def test_pre_commit_passes_on_a_fresh_repo(
    rendered: Render, combination: Combination, tmp_path: Path, pre_commit_home: Path
) -> None:
    """Every hook of the generated config, mypy aside (next test), passes without changing a file."""
    repo = fresh_git_repo(rendered("cookiecutter", combination), tmp_path / "repo")
    result = pre_commit(repo, pre_commit_home, "--all-files", "--show-diff-on-failure", skip=("mypy",))
    assert result.returncode == 0, result.stdout + result.stderr


def test_pre_commit_type_check_passes(
    rendered: Render, tmp_path: Path, pre_commit_home: Path, tool_cache: Path
) -> None:
    """The mypy hook runs in the developer's environment, which needs the project's dependencies.
    The hook is the same in every combination, and mypy passes in each (test_generated_repo.py)."""
    missing = [name for name in ["numpy", "torch"] if not find_spec(name)]
    if missing:
        pytest.skip(f"the mypy hook type-checks against {', '.join(missing)}: install them to run it")
    repo = fresh_git_repo(rendered("cookiecutter", SINGLE), tmp_path / "repo")
    # mypy's own cache, kept between runs: analysing torch's types takes most of the time.
    cache = {"MYPY_CACHE_DIR": str(tool_cache / "mypy-pre-commit")}
    result = pre_commit(repo, pre_commit_home, "mypy", "--all-files", env=cache)
    assert result.returncode == 0, result.stdout + result.stderr


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
