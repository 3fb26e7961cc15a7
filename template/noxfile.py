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
from pathlib import Path

import nox
from packaging.requirements import Requirement

nox.needs_version = ">=2025.2.9"

PYPROJECT = nox.project.load_toml("pyproject.toml")
DISTRIBUTION = PYPROJECT["project"]["name"]
# The package with every optional backend (extra) it declares: the tests cover them all.
EXTRAS = ",".join(PYPROJECT["project"].get("optional-dependencies", {}))
PROJECT = f".[{EXTRAS}]" if EXTRAS else "."

# Offline (README), sessions add wheels/ to pip's own find-links and take the parity harness's
# wheel from there instead of the `parity` group (the template's repository).
WHEELS = Path("wheels").resolve()
FIND_LINKS = ["--find-links", str(WHEELS)] if WHEELS.is_dir() else []
HARNESS_WHEELS = [str(wheel) for wheel in sorted(WHEELS.glob("parity-*.whl"))[-1:]]
HARNESS = HARNESS_WHEELS or nox.project.dependency_groups(PYPROJECT, "parity")

TEST_REQUIREMENTS = [*HARNESS, *nox.project.dependency_groups(PYPROJECT, "test")]
BENCH_REQUIREMENTS = [*HARNESS, *nox.project.dependency_groups(PYPROJECT, "bench")]
DOCS_REQUIREMENTS = [*HARNESS, *nox.project.dependency_groups(PYPROJECT, "docs")]

# torch is installed first, on its own and pinned, from an index the environment can change.
TORCH_VERSION = os.environ.get("TORCH_VERSION", "2.13.0")
TORCH_INDEX_HOST = "download.pytorch.org"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_INDEX = "https://download.pytorch.org/whl/cu128"
REQUIRE_GPU = os.environ.get("REQUIRE_GPU", "") not in {"", "0"}

TRAIN_EXAMPLE = "examples/train.py"


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
    if HARNESS_WHEELS:
        session.log(f"the parity harness from {HARNESS_WHEELS[0]}")
    session.install(f"torch=={TORCH_VERSION}", *index, *FIND_LINKS)
    session.install(PROJECT, *requirements, *reinstall_project(session), *FIND_LINKS)


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


@nox.session
def lint(session: nox.Session) -> None:
    """Refuse unresolved conflicts, then check style with ruff: lint rules and formatting (nothing
    is rewritten)."""
    # The tools alone (`--no-deps`: no torch) list them and say how to resolve them.
    session.install("--no-deps", *HARNESS)
    session.run("parity", "conflicts")
    session.install(dev_tool("ruff"))
    session.run("ruff", "check", *session.posargs)
    session.run("ruff", "format", "--check", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the package and its tests with mypy, against the pinned CPU build of torch."""
    install(session, TORCH_INDEX_URL, *TEST_REQUIREMENTS, dev_tool("mypy"))
    session.run("mypy", *session.posargs)


@nox.session(default=False, reuse_venv=True)
def docs(session: nox.Session) -> None:
    """Build the docs site into docs/_build/html (open its index.html), warnings as errors: the
    guide, each algorithm's page from its docstrings and its ports' code, with the math and the
    latest `tests` report. Offline; the environment is kept, only what changed is reinstalled."""
    install_when_changed(session, TORCH_INDEX_URL, *DOCS_REQUIREMENTS)  # the pages import it
    session.run("sphinx-build", "-M", "html", "docs", "docs/_build", "-W", "--keep-going")


@nox.session(reuse_venv=True)
def tests(session: nox.Session) -> None:
    """Run the test suite on the CPU, with torch from PyTorch's CPU index (TORCH_INDEX_URL).

    The environment is kept between runs, and only what changed is installed again (`-N`
    starts afresh): after editing a port, `nox -s tests` takes seconds. How close each port
    came goes to reports/parity.json, shown by `nox -s docs`."""
    install_when_changed(session, TORCH_INDEX_URL, *TEST_REQUIREMENTS)
    session.run("python", "-m", "pytest", "--parity-report=reports/parity.json", *session.posargs)


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

    A table, Markdown, JSON and a plot; options after `--`, e.g. `-- --device cuda`,
    `-- --threads 4` (default 1), `-- --save-baseline` then later `-- --compare main`, or
    `-- --help`. The environment is kept between runs, as for `tests`: only what changed is
    installed again.
    """
    # A GPU run gets a CUDA build of torch; the timings are then written with that build.
    cuda = any(arg in {"cuda", "--device=cuda"} for arg in session.posargs)
    index = TORCH_CUDA_INDEX_URL if cuda else TORCH_INDEX_URL
    install_when_changed(session, index, *BENCH_REQUIREMENTS)
    session.run("parity", "bench", *session.posargs)


@nox.session(default=False)
def results(session: nox.Session) -> None:
    """The latest sweep's table (Markdown, CSV, LaTeX) and figures, in results/<sweep id>/.

    Options after `--`, e.g. `-- --sweep runs/sweeps/<id>.json` or `-- --each` (every sweep).
    """
    # No torch needed: the tools without their dependencies, and the tables' and plots' libraries.
    session.install("--no-deps", *HARNESS)
    session.install(*nox.project.dependency_groups(PYPROJECT, "results"))
    session.run("parity", "results", *session.posargs)


@nox.session(default=False)
def template_update(session: nox.Session) -> None:
    """Bring the template's newest release into a new branch: commit, lint every file, and print
    the pull request's title and body (nothing is pushed, merged, or resolved)."""
    session.install(dev_tool("copier"), dev_tool("ruff"))
    session.install("--no-deps", *HARNESS)  # the tools, without torch
    body = Path(session.create_tmp(), "pull-request.md").resolve()
    # stderr apart: stdout carries only the pull request's text.
    session.run("parity", "update", "--body-file", str(body), stderr=None)


if __name__ == "__main__":
    nox.main()
