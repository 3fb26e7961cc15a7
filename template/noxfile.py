#!/usr/bin/env -S uv run --script
# /// script
# dependencies = ["nox>=2025.2.9"]
# ///
"""Development sessions. `nox -l` lists them; `nox` runs lint, typecheck and tests.

Each session makes a fresh virtual environment and installs what it needs: a pinned PyTorch build
first, on its own, then this project with its `test` dependency group. On a GPU cluster, where
torch is already installed, run a session inside the environment you have instead:

    nox --no-venv --no-install -s tests_cuda

Environment variables (an empty value for an index means "pip's own index and configuration",
such as a cluster's mirror or wheelhouse; sessions then install with pip, as uv ignores that
configuration):
    TORCH_VERSION         the PyTorch release to install (default below: always pinned, because
                          an unpinned `torch` on Linux pulls a CUDA build of several GB)
    TORCH_INDEX_URL       where CPU sessions get torch (default: PyTorch's CPU-only index, or ""
                          where download.pytorch.org does not resolve, as on an offline cluster)
    TORCH_CUDA_INDEX_URL  where `tests_cuda` gets torch (default: PyTorch's CUDA 12.8 index, or
                          "" as above)
    REQUIRE_GPU=1         make `tests_cuda` fail, not skip, on a machine without an NVIDIA GPU
    HYPOTHESIS_SEED       the seed of `tests_thorough` (default: a fresh random one, printed)
    GITHUB_OUTPUT         set by GitHub Actions: `template_update` writes its results there
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import nox
from packaging.requirements import Requirement

nox.needs_version = ">=2025.2.9"

PYPROJECT = nox.project.load_toml("pyproject.toml")
DISTRIBUTION = PYPROJECT["project"]["name"]
# The package with every optional backend (extra) it declares: the tests cover them all.
EXTRAS = ",".join(PYPROJECT["project"].get("optional-dependencies", {}))
PROJECT = f".[{EXTRAS}]" if EXTRAS else "."

TEST_REQUIREMENTS = nox.project.dependency_groups(PYPROJECT, "test")
BENCH_REQUIREMENTS = nox.project.dependency_groups(PYPROJECT, "bench")
DOCS_REQUIREMENTS = nox.project.dependency_groups(PYPROJECT, "docs")

# torch is installed first, on its own and pinned, from an index the environment can change.
TORCH_VERSION = os.environ.get("TORCH_VERSION", "2.13.0")
TORCH_INDEX_HOST = "download.pytorch.org"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_INDEX = "https://download.pytorch.org/whl/cu128"
REQUIRE_GPU = os.environ.get("REQUIRE_GPU", "") not in {"", "0"}

TRAIN_EXAMPLE = "examples/train.py"
BENCH_SCRIPT = "scripts/bench.py"
RESULTS_SCRIPT = "scripts/results.py"

# `template_update`: the copier that updates this repo (pinned: an update must not change with
# whatever copier release is newest), and what `copier update` leaves where it could not merge.
COPIER = "copier==9.19.1"
ANSWERS_FILE = Path(".copier-answers.yml")
# Lists the files with conflict markers or .rej files; plain Python that imports nothing of this
# repo, so it also runs where a conflict keeps this file from loading (CI runs it before nox).
CONFLICT_CHECK = "scripts/check_conflicts.py"


@functools.cache
def resolves(host: str) -> bool:
    """Whether `host` has an address: offline machines reach package indexes through a mirror."""
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def torch_index(variable: str, default: str) -> str:
    """The environment's `variable` if set; else `default` where PyTorch's host resolves, and ""
    where it does not: pip's own configuration at once, rather than after minutes of retries."""
    if variable in os.environ:
        return os.environ[variable]
    return default if resolves(TORCH_INDEX_HOST) else ""


TORCH_INDEX_URL = torch_index("TORCH_INDEX_URL", CPU_INDEX)
TORCH_CUDA_INDEX_URL = torch_index("TORCH_CUDA_INDEX_URL", CUDA_INDEX)
# uv where installed, unless torch comes from pip's configuration, which uv does not read.
FROM_PIP_CONFIGURATION = not (TORCH_INDEX_URL and TORCH_CUDA_INDEX_URL)
nox.options.default_venv_backend = "virtualenv" if FROM_PIP_CONFIGURATION else "uv|virtualenv"


def dev_tool(name: str) -> str:
    """The requirement for `name` in the `dev` dependency group, so versions live in one place."""
    for requirement in nox.project.dependency_groups(PYPROJECT, "dev"):
        if Requirement(requirement).name == name:
            return requirement
    return name


def install(session: nox.Session, torch_index_url: str, *requirements: str) -> None:
    """Install the pinned torch alone (from `torch_index_url`, where an empty URL means pip's own
    index), then this project with `requirements`: a real install, not an editable one."""
    index = ["--index-url", torch_index_url] if torch_index_url else []
    if not index:
        why = "set empty" if resolves(TORCH_INDEX_HOST) else f"{TORCH_INDEX_HOST} does not resolve"
        session.log(f"torch from pip's own index and configuration ({why})")
    session.install(f"torch=={TORCH_VERSION}", *index)
    session.install(PROJECT, *requirements, *reinstall_project(session))


def reinstall_project(session: nox.Session) -> list[str]:
    """uv keeps an installed local package of the same version; pip always rebuilds it."""
    return ["--reinstall-package", DISTRIBUTION] if session.venv_backend == "uv" else []


def fingerprint(*paths: Path) -> str:
    """A hash of the files at `paths` (folders: every file inside, caches aside)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in files:
            if file.is_file() and "__pycache__" not in file.parts:
                digest.update(f"{file}\0".encode() + file.read_bytes())
    return digest.hexdigest()


def install_when_changed(session: nox.Session, torch_index_url: str, *requirements: str) -> None:
    """`install` into a reused environment only what changed since the last run: everything
    when the requirements or pyproject.toml did, the project alone when its sources did, and
    nothing otherwise, so that running the tests again after an edit takes seconds."""
    location = getattr(session.virtualenv, "location", None)
    if not location:  # --no-venv: nothing is installed anyway
        install(session, torch_index_url, *requirements)
        return
    record = Path(location) / "installed-for-nox.json"
    wanted = {
        "requirements": [f"torch=={TORCH_VERSION}", torch_index_url, *requirements],
        "pyproject": fingerprint(Path("pyproject.toml")),
        "project": fingerprint(Path("src"), Path("README.md")),
    }
    found = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    if {key: found.get(key) for key in ("requirements", "pyproject")} != {
        key: wanted[key] for key in ("requirements", "pyproject")
    }:
        install(session, torch_index_url, *requirements)
    elif found.get("project") != wanted["project"]:
        session.install(PROJECT, "--no-deps", *reinstall_project(session))
    else:
        session.log("Requirements and project unchanged since the last run: nothing to install")
    record.write_text(json.dumps(wanted), encoding="utf-8")


def why_no_gpu() -> str | None:
    """Why this machine cannot run CUDA tests, or None when `nvidia-smi -L` lists a GPU."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "unset").strip() in {"", "-1"}:
        return "no NVIDIA GPU visible: CUDA_VISIBLE_DEVICES hides them all"
    nvidia_smi = shutil.which("nvidia-smi")
    if nvidia_smi is None:
        return "no NVIDIA GPU found: nvidia-smi is not on PATH"
    try:
        listing = subprocess.run(
            [nvidia_smi, "-L"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"no NVIDIA GPU found: `nvidia-smi -L` failed ({error})"
    if listing.returncode != 0 or not listing.stdout.lstrip().startswith("GPU"):
        output = (listing.stdout + listing.stderr).strip() or f"exit status {listing.returncode}"
        return f"no NVIDIA GPU found: `nvidia-smi -L` says: {output}"
    return None


def git(*args: str) -> str:
    """Run git in this repo; its output, without the trailing newline."""
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True
    ).stdout.rstrip()


def unresolved_conflicts() -> list[str]:
    """Files with conflict markers (from `copier update` or a merge) and `.rej` files, among the
    files git tracks or would track."""
    found = subprocess.run(
        [sys.executable, CONFLICT_CHECK, "--names"], capture_output=True, text=True, check=False
    )
    if found.returncode not in {0, 1}:
        msg = f"{CONFLICT_CHECK} failed: {found.stderr.strip()}"
        raise RuntimeError(msg)
    return found.stdout.splitlines()


@nox.session
def lint(session: nox.Session) -> None:
    """Refuse unresolved conflicts, then check style with ruff: lint rules and formatting (nothing
    is rewritten)."""
    session.run("python", CONFLICT_CHECK)  # says where they are and how to resolve them
    session.install(dev_tool("ruff"))
    session.run("ruff", "check", *session.posargs)
    session.run("ruff", "format", "--check", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the package and its tests with mypy, against the pinned CPU build of torch."""
    install(session, TORCH_INDEX_URL, *TEST_REQUIREMENTS, dev_tool("mypy"))
    session.run("mypy", *session.posargs)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Build the docs site into docs/_build/html (open its index.html), warnings as errors: the
    guide, and each algorithm's page from its docstrings, with the math. No network needed."""
    install(session, TORCH_INDEX_URL, *DOCS_REQUIREMENTS)  # the pages import the package
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-W", "--keep-going")


@nox.session(reuse_venv=True)
def tests(session: nox.Session) -> None:
    """Run the test suite on the CPU, with torch from PyTorch's CPU index (TORCH_INDEX_URL).

    The environment is kept between runs, and only what changed is installed again (`-N`
    starts afresh): after editing a port, `nox -s tests` takes seconds.
    """
    install_when_changed(session, TORCH_INDEX_URL, *TEST_REQUIREMENTS)
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session(default=False)
def tests_thorough(session: nox.Session) -> None:
    """Run the tests with 300 hypothesis examples each, from a fresh random seed it prints.

    `HYPOTHESIS_SEED=SEED nox -s tests_thorough` repeats a run: the seed draws the same examples.
    No example database: every run starts from its seed alone.
    """
    seed = os.environ.get("HYPOTHESIS_SEED") or str(random.SystemRandom().randrange(2**32))
    again = f"HYPOTHESIS_SEED={seed} nox -s tests_thorough"
    install_when_changed(session, TORCH_INDEX_URL, *TEST_REQUIREMENTS)
    session.log(f"hypothesis seed {seed}; to repeat this run: {again}")
    options = ["--hypothesis-profile=thorough", f"--hypothesis-seed={seed}"]
    try:
        session.run("python", "-m", "pytest", *options, "-p", "no:cacheprovider", *session.posargs)
    except nox.command.CommandFailed:
        session.error(f"failed with hypothesis seed {seed}; to reproduce it: {again}")


@nox.session(default=False)
def tests_cuda(session: nox.Session) -> None:
    """Run the test suite on an NVIDIA GPU (a CUDA build of torch); skips without one."""
    require_gpu = REQUIRE_GPU or "--require-gpu" in session.posargs
    pytest_args = [arg for arg in session.posargs if arg != "--require-gpu"]
    # Decided before anything is installed: a CPU machine never downloads a CUDA build of torch.
    reason = why_no_gpu()
    if reason is not None and require_gpu:
        session.error(f"{reason}; a GPU is required here (REQUIRE_GPU=1 or --require-gpu)")
    if reason is not None:
        session.skip(f"{reason}. Set REQUIRE_GPU=1 (or pass `-- --require-gpu`) to fail instead")
    install(session, TORCH_CUDA_INDEX_URL, *TEST_REQUIREMENTS)
    session.run("python", "-m", "pytest", "--require-device", "cuda", *pytest_args)


@nox.session(default=False)
def train(session: nox.Session) -> None:
    """Run the training example on the CPU (pass its options after `--`, e.g. `-- --epochs 5`)."""
    install(session, TORCH_INDEX_URL)
    session.run("python", TRAIN_EXAMPLE, *session.posargs)


@nox.session(default=False)
def train_distributed(session: nox.Session) -> None:
    """Run the training example in 2 CPU processes with torchrun (its options after `--`)."""
    install(session, TORCH_INDEX_URL)
    torchrun = ["python", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    session.run(*torchrun, TRAIN_EXAMPLE, *session.posargs)


@nox.session(default=False, reuse_venv=True)
def bench(session: nox.Session) -> None:
    """Time every public function per backend, eager and compiled, into bench-results/.

    A table, Markdown, JSON and a plot; options after `--`, e.g. `-- --device cuda` or `-- --help`.
    The environment is kept between runs, as for `tests`: only what changed is installed again.
    """
    # A GPU run gets a CUDA build of torch; the timings are then written with that build.
    cuda = any(arg in {"cuda", "--device=cuda"} for arg in session.posargs)
    index = TORCH_CUDA_INDEX_URL if cuda else TORCH_INDEX_URL
    install_when_changed(session, index, *BENCH_REQUIREMENTS)
    session.run("python", BENCH_SCRIPT, *session.posargs)


@nox.session(default=False)
def results(session: nox.Session) -> None:
    """Collect the runs under runs/ into results/: a table per setting (Markdown, CSV) and a plot.

    Options after `--`, e.g. `-- --sweep runs/sweeps/<id>.json` for one sweep's runs only.
    """
    session.install(dev_tool("matplotlib"))  # reading the records needs no torch
    session.run("python", RESULTS_SCRIPT, *session.posargs)


@nox.session(default=False)
def template_update(session: nox.Session) -> None:
    """Bring the template's newest release into a new branch: commit, and print the pull request's
    title and body (nothing is pushed, merged, or resolved; conflicts are committed as they are)."""
    session.install(COPIER)
    if git("status", "--porcelain"):
        session.error("uncommitted changes: commit or stash them first, then run this again")
    check = session.run(
        "copier", "check-update", "--output-format", "json", silent=True, stderr=None
    )
    status = json.loads(str(check).strip().splitlines()[-1])
    if not status["update_available"]:
        session.log(f"Up to date: the template's newest release is {status['current_version']}.")
        github_output(update="false")
        return
    old, new = status["current_version"], status["latest_version"]
    # A branch per release, made afresh from here: running again refreshes it.
    branch = f"template-update/{new}"
    git("switch", "--force-create", branch)
    # copier reports on stderr, so that stdout carries only the pull request's text.
    session.run("copier", "update", "--defaults", "--conflict", "inline", stdout=sys.stderr)
    conflicts = unresolved_conflicts()
    changed = git("status", "--porcelain", "--untracked-files=all").splitlines()
    git("add", "--all")
    title = f"Update from the template: {old} to {new}"
    # Markers are committed as copier left them (never resolved here); --no-verify because the
    # pre-commit hooks rightly refuse them. The lint session keeps the branch from going green.
    git("commit", "--quiet", "--no-verify", "--message", title)
    body = pull_request_body(old, new, changed, conflicts)
    sys.stdout.write(f"{title}\n\n{body}")
    body_file = Path(session.create_tmp(), "pull-request.md")
    body_file.write_text(body, encoding="utf-8")
    session.log(f"On branch {branch}. To propose it: git push --force -u origin {branch}")
    github_output(
        update="true",
        branch=branch,
        title=title,
        body_file=str(body_file.resolve()),
        draft=str(bool(conflicts)).lower(),
    )


def template_source() -> str:
    """Where the template lives: `_src_path` in the answers file (one line of plain YAML)."""
    for line in ANSWERS_FILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("_src_path:"):
            return line.partition(":")[2].strip().strip("'\"")
    return "the template"


def pull_request_body(old: str, new: str, changed: list[str], conflicts: list[str]) -> str:
    """What the update changed, and every file it could not merge, in Markdown."""
    lines = [
        f"`copier update` brought the template ({template_source()}) from {old} to {new};",
        "its CHANGELOG.md says what each release changed. Files this update touched:",
        "",
        *(f"- `{line[3:]}` ({change_kind(line[:2])})" for line in changed),
    ]
    if conflicts:
        lines += [
            "",
            "**Draft: copier could not merge these files.** Nothing was resolved for you:",
            "",
            *(f"- `{name}`" for name in conflicts),
            "",
            "Check out this branch. In each file, keep what you want between the",
            "`<<<<<<< before updating` and `>>>>>>> after updating` markers, then remove them;",
            "apply each `.rej` file's change by hand and delete it. Then commit, push, and",
            "mark this pull request ready for review. `python scripts/check_conflicts.py` lists",
            "what is left; CI fails until nothing is.",
        ]
    return "\n".join(lines) + "\n"


def change_kind(status: str) -> str:
    """A `git status --porcelain` code (XY) in words."""
    if "U" in status or status in {"AA", "DD"}:
        return "not merged"
    if "?" in status or "A" in status:
        return "new"
    return "deleted" if "D" in status else "changed"


def github_output(**values: str) -> None:
    """Hand results to later steps of a GitHub Actions job (nothing outside Actions)."""
    if output := os.environ.get("GITHUB_OUTPUT"):
        with Path(output).open("a", encoding="utf-8") as file:
            file.writelines(f"{key}={value}\n" for key, value in values.items())


if __name__ == "__main__":
    nox.main()
