"""The generated `.pre-commit-config.yaml`, run by the real pre-commit with the network cut.

Every hook is local and runs a tool of the development environment that the generated README's
install steps make (`pip install --group dev`), so commits work on a machine that reaches no
network, as on many clusters. Here that environment is a venv that sees this interpreter's
packages (torch and numpy, which mypy needs, through a `.pth` file) and gets the `dev` group's
missing pins from pip (the one step with network, as in the README). Everything after it runs in
a network namespace without any interface (`unshare -n`): `pre-commit install`, the hooks, the
commits. Conflicts left by a real `copier update` are in test_update.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

from tests.render import BIN, COMBINATIONS, ROOT, Combination, Render, fresh_git_repo, git, read_pyproject, run

SINGLE = COMBINATIONS[0]
CONFLICT = "<<<<<<< before updating\nmine\n=======\ntheirs\n>>>>>>> after updating\n"
# The tools the hooks run, each pinned once in the generated `dev` group.
HOOK_TOOLS = ["codespell", "mypy", "nbstripout", "pre-commit-hooks", "ruff", "zizmor"]


def offline_prefix() -> list[str]:
    """The command prefix that cuts the network: `unshare -n` as root, `unshare -rn` for a user
    allowed user namespaces; skips the test (saying how to run it) where neither works."""
    for prefix in (["unshare", "-n", "--"], ["unshare", "-rn", "--"]):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode == 0:
                return prefix
        except FileNotFoundError:
            break
    pytest.skip("cutting the network needs `unshare -n` (util-linux) as root, or user namespaces")


def read_config(repo: Path) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return config


def dev_pins(repo: Path) -> dict[str, str]:
    """The `dev` group's requirements of the generated pyproject.toml, by project name."""
    group = read_pyproject(repo)["dependency-groups"]["dev"]
    return {Requirement(spec).name: spec for spec in group if isinstance(spec, str)}


@pytest.fixture(scope="session")
def dev_env(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the generated `dev` group installed (see the module docstring); its bin/."""
    venv = tmp_path_factory.mktemp("dev-env")
    run([sys.executable, "-m", "venv", venv])
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "tests-interpreter.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    pip: list[str | Path] = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
    run([*pip, "--upgrade", "pip"])  # as the README says: `--group` needs pip 25.1
    run([*pip, "--group", "dev"], cwd=rendered("cookiecutter", SINGLE))
    return venv / "bin"


def offline(repo: Path, dev_bin: Path, script: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """`script` (bash) in `repo` with the network cut, the dev environment first on PATH (as
    once activated), then this interpreter's scripts (the tools the `.pth` brings)."""
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(dev_bin), str(BIN), os.environ["PATH"]]),
        "MYPY_CACHE_DIR": str(cache / "mypy-pre-commit"),  # torch's types, analysed once
        "PRE_COMMIT_HOME": str(cache / "pre-commit-offline"),
    }
    command = [*offline_prefix(), "bash", "-euo", "pipefail", "-c", script]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)


def test_every_hook_is_local_and_each_tool_pinned_once(rendered: Render) -> None:
    """No hook repository to clone; the tools' versions live in the dev group only, and the
    template's own test environment has the same ruff and mypy (its tests run the hooks)."""
    repo = rendered("cookiecutter", SINGLE)
    run([BIN / "pre-commit", "validate-config", repo / ".pre-commit-config.yaml"])
    remote = [entry["repo"] for entry in read_config(repo)["repos"] if entry["repo"] != "local"]
    assert not remote, f"hooks that need the network to install: {remote}"
    pins = dev_pins(repo)
    unpinned = [name for name in HOOK_TOOLS if "==" not in pins.get(name, "")]
    assert not unpinned, f"pin each hook's tool in the dev group: {unpinned}"
    ours = {Requirement(spec).name: spec for spec in read_pyproject(ROOT)["dependency-groups"]["test"]}
    assert [ours["ruff"], ours["mypy"]] == [pins["ruff"], pins["mypy"]]
    text = (repo / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "rev:" not in text
    assert "==" not in text


def test_pre_commit_passes_offline_on_a_fresh_repo(
    rendered: Render, combination: Combination, tmp_path: Path, dev_env: Path, tool_cache: Path
) -> None:
    """Every hook but mypy (test_generated_repo.py runs it in each combination) passes, changing
    no file, with no network."""
    repo = fresh_git_repo(rendered("cookiecutter", combination), tmp_path / "repo")
    result = offline(repo, dev_env, "SKIP=mypy pre-commit run --all-files --show-diff-on-failure", tool_cache)
    assert result.returncode == 0, result.stdout + result.stderr


def test_commits_work_offline_and_refuse_a_lint_error(
    rendered: Render, tmp_path: Path, dev_env: Path, tool_cache: Path
) -> None:
    """The README's steps from a fresh render, offline after the install: the repo, its first
    commit and `pre-commit install`; then a commit runs every hook and lands, and a lint error is
    refused with the file and rule named, the commit not made."""
    repo = Path(shutil.copytree(rendered("cookiecutter", SINGLE), tmp_path / "repo"))
    readme = (repo / "README.md").read_text(encoding="utf-8")
    first_step = readme.split("\n## Install\n", 1)[1].split("```bash\n", 1)[1].splitlines()[0]
    assert first_step.startswith("git init && "), first_step
    setup = offline(repo, dev_env, f"{first_step}\npre-commit install", tool_cache)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    first = git(repo, "rev-parse", "HEAD")

    module = repo / "src" / "my_research_project" / "__init__.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# Checked against the paper.\n", encoding="utf-8")
    landed = offline(repo, dev_env, "git commit -qam 'A note'", tool_cache)
    assert landed.returncode == 0, landed.stdout + landed.stderr
    assert git(repo, "rev-parse", "HEAD~1") == first
    # git shows a hook's output on stderr.
    for hook in ("no unresolved conflicts", "ruff check", "ruff format", "mypy", "codespell"):
        (line,) = [line for line in landed.stderr.splitlines() if line.startswith(hook)]
        assert line.endswith("Passed"), landed.stderr

    module.write_text(module.read_text(encoding="utf-8") + "\nVALUE = undefined_name\n", encoding="utf-8")
    refused = offline(repo, dev_env, "git commit -qam 'A bug'", tool_cache)
    assert refused.returncode != 0, refused.stderr
    assert "F821 Undefined name `undefined_name`" in refused.stderr
    assert "src/my_research_project/__init__.py" in refused.stderr
    assert git(repo, "rev-parse", "HEAD~1") == first, "the refused commit was made"


@pytest.mark.parametrize(
    ("path", "content"),
    [("README.md", CONFLICT), ("noxfile.py", CONFLICT), ("noxfile.py.rej", "@@ -1 +1 @@\n")],
    ids=["markers-in-readme", "markers-in-noxfile", "rej-file"],
)
def test_pre_commit_refuses_what_copier_update_leaves_unresolved(
    rendered: Render, tmp_path: Path, dev_env: Path, tool_cache: Path, path: str, content: str
) -> None:
    """`copier update` exits 0 with conflict markers (outside a git merge) or .rej files left."""
    repo = fresh_git_repo(rendered("cookiecutter", SINGLE), tmp_path / "repo")
    with (repo / path).open("a", encoding="utf-8") as file:
        file.write(content)
    git(repo, "add", "-A")
    result = offline(repo, dev_env, "pre-commit run unresolved-conflicts --all-files", tool_cache)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"in: {path}." in result.stdout
