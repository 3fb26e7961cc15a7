#!/usr/bin/env -S uv run --script
# /// script
# dependencies = ["nox>=2026.8.10"]
# ///
"""Sessions for the template itself. `nox -l` lists them; `nox` runs the default ones (what CI runs).

`generated(...)` renders one combination of options with the cookiecutter CLI and runs the generated
repo's own nox sessions in it: each makes a fresh virtual environment and installs the generated
package for real, as a user would. Environments are reused between runs (`nox -N` starts afresh);
a generated repo's environments live inside its `generated(...)` session's folder, so they are
reused, and thrown away, together with it (in CI, where nothing reuses them, at the session's end).

Environment variables (the generated repos' noxfiles read the same ones):
    TORCH_VERSION         the torch release to install (default: the generated noxfile's pin)
    TORCH_INDEX_URL       where CPU sessions get torch. Unset: PyTorch's CPU index where it
                          resolves; where it does not (an offline machine), "" = pip's own index
                          and configuration (a local wheelhouse or mirror), installed with pip
    TORCH_CUDA_INDEX_URL  where `generated_cuda(...)` gets a CUDA build of torch
    REQUIRE_GPU=1         make `generated_cuda(...)` fail, not skip, without an NVIDIA GPU
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import nox
from packaging.requirements import Requirement

nox.needs_version = ">=2026.8.10"  # the first nox that runs sessions in parallel
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
# Two sessions at a time, each in its own process: the test suite (the longest session) beside lint
# and the generated repos, which wait on installs more than on the CPU (README: "Speed"). Sessions
# that time things, or share a GPU, set allow_parallel=False; `-j 1` runs one at a time.
nox.options.parallel = 2
nox.options.allow_parallel = True

ROOT = Path(__file__).resolve().parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
QUESTIONS = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
# Every layout and JAX answer, the options that change which files a repo gets (tests/render.py),
# each with Triton, whose files come on top of the others (the tests session also renders some without).
COMBINATIONS = [(layout, jax) for layout in QUESTIONS["layout"] for jax in (False, True)]


def combination_id(layout: str, jax: bool) -> str:
    return layout + ("-jax" if jax else "")


COMBINATION_IDS = [combination_id(*combination) for combination in COMBINATIONS]

# The combinations `generated(...)` renders and what it runs there, each session in a fresh
# environment with a real install: the two ends. split-jax, which has every file: the lint and the
# tests (the default `nox`). single, the fewest (in `nox -s proofs`): the type check and the tests.
# The tests session covers every combination in one shared environment: the suite, ruff and mypy,
# the training example in one process and in two (torchrun) in both layouts (tests/test_training.py;
# the `train` sessions here too took 2 of the default `nox`'s minutes: docs/measurements.md).
GENERATED_SESSIONS = {
    ("single", False): ["typecheck", "tests"],
    ("split", True): ["lint", "tests"],
}
GENERATED_NOXFILE = ROOT / "template" / "noxfile.py"
# The default `nox` (README: "Speed"): without `-s`; `nox -s proofs`, which CI runs too, renders single.
nox.options.sessions = ["lint", "tests", "generated(split-jax)"]


def load(path: Path) -> ModuleType:
    """A module of this repo, by its path: nox does not put the noxfile's folder on sys.path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Where torch comes from and whether a GPU is there (the generated noxfile's rules, shared with the
# tests and benchmarks); parity's wheel from this tree.
TORCH_INDEX = load(ROOT / "tests" / "torch_index.py")
WHEELHOUSE = load(ROOT / "tests" / "wheelhouse.py")
REQUIRE_GPU = os.environ.get("REQUIRE_GPU", "") not in {"", "0"}


# Helpers ------------------------------------------------------------------------------------------


def requirement(group: str, name: str) -> str:
    """The requirement for `name` in dependency group `group` of pyproject.toml."""
    for spec in nox.project.dependency_groups(PYPROJECT, group):
        if Requirement(spec).name == name:
            return spec
    msg = f"{name} is not in the {group!r} dependency group of pyproject.toml"
    raise LookupError(msg)


def generated_default(name: str) -> str:
    """The default in the generated noxfile's `NAME = os.environ.get("NAME", "default")` (the file
    is plain Python), so that a value such as the pinned torch version is written there only."""
    for node in ast.walk(ast.parse(GENERATED_NOXFILE.read_text(encoding="utf-8"))):
        match node:
            case ast.Assign(
                targets=[ast.Name(id=target)],
                value=ast.Call(args=[_, ast.Constant(value=str(value))]),
            ) if target == name:
                return value
    msg = f"{GENERATED_NOXFILE} has no `{name} = os.environ.get({name!r}, ...)`"
    raise LookupError(msg)


def torch_index_url(session: nox.Session) -> str:
    """The torch index the tests and benchmarks choose too (tests/torch_index.py): TORCH_INDEX_URL
    as set; unset, PyTorch's CPU index where it resolves, else "" (pip's own configuration)."""
    index_url: str = TORCH_INDEX.torch_index_url()
    if not index_url and "TORCH_INDEX_URL" not in os.environ:
        session.log(f"{TORCH_INDEX.TORCH_INDEX_HOST} does not resolve: torch comes from pip's configuration")
    return index_url


def install_torch(session: nox.Session) -> None:
    """Install the generated repos' pinned torch alone, before anything can ask PyPI for it."""
    version = os.environ.get("TORCH_VERSION") or generated_default("TORCH_VERSION")
    index_url = torch_index_url(session)
    if not index_url and session.venv_backend == "uv":
        session.error(
            "uv ignores pip's configuration, and from PyPI torch is a CUDA build of several GB:"
            " set TORCH_INDEX_URL, or run nox with --default-venv-backend virtualenv"
        )
    session.install(f"torch=={version}", *(["--index-url", index_url] if index_url else []))


def parity_wheelhouse(session: nox.Session) -> Path:
    """Build the parity harness's wheel from this tree into the session's environment folder;
    return the wheel. Not in `workdir`: nox's tmp folder would become TMPDIR, inside this checkout,
    and the tests need theirs outside any repository."""
    folder = Path(getattr(session.virtualenv, "location", None) or ROOT / ".nox").resolve() / "wheelhouse"
    shutil.rmtree(folder, ignore_errors=True)
    wheel: Path = WHEELHOUSE.build(folder)
    return wheel


def install_test_requirements(session: nox.Session) -> None:
    """torch, then the test group and the parity harness, its wheel built from this tree; the
    tests find that wheel's folder in PIP_FIND_LINKS (tests/conftest.py)."""
    install_torch(session)
    wheel = parity_wheelhouse(session)
    session.env.update(WHEELHOUSE.find_links(wheel.parent))
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"), str(wheel))


def offline_wheels(session: nox.Session, project: Path) -> None:
    """Put the harness's wheel from this tree in the generated repo's wheels/, as a machine without
    internet access has it (its README, "Offline"): its noxfile installs it from there by itself,
    instead of the template's commit its pyproject.toml pins."""
    (project / "wheels").mkdir()
    shutil.copy2(parity_wheelhouse(session), project / "wheels")


def workdir(session: nox.Session) -> Path:
    """This session's scratch folder, absolute (a generated repo's nox runs in its own folder)."""
    return Path(session.create_tmp()).resolve()


def render(session: nox.Session, layout: str, jax: bool, output: Path) -> Path:
    """Render this working tree with the cookiecutter CLI (default answers but for the options)
    into a clean `output` folder; return the generated repo."""
    shutil.rmtree(output, ignore_errors=True)
    session.run(
        "cookiecutter",
        "--no-input",
        "--default-config",  # not the user's ~/.cookiecutterrc
        "--output-dir",
        str(output),
        str(ROOT),
        f"layout={layout}",
        f"jax={str(jax).lower()}",
        "triton=true",
        silent=True,
    )
    (project,) = output.iterdir()
    # A repository of its own, as a user's would be: inside this checkout, ruff would otherwise
    # obey the `*` that nox's .gitignore puts in .nox/ and check no file at all.
    session.run("git", "init", "--quiet", str(project), external=True)
    return project


def run_generated(session: nox.Session, project: Path, *nox_args: str, backend: str) -> None:
    """Run the generated repo's noxfile with this nox, its environments in this session's folder.

    In CI (CI is set; .ci/run sets it) nothing reuses them, and with torch in each they take 4 GB
    (6 GB with JAX) a session: they are deleted when the session ends."""
    envdir = workdir(session) / "envs"
    try:
        session.run(
            *(sys.executable, "-m", "nox", "--noxfile", str(project / "noxfile.py")),
            *("--envdir", str(envdir), "--reuse-venv=yes", "--default-venv-backend", backend),
            *nox_args,
            external=True,
        )
    finally:
        if os.environ.get("CI"):
            session.log(f"CI: deleting {envdir}")
            shutil.rmtree(envdir, ignore_errors=True)


def check_github(session: nox.Session, repo: Path) -> None:
    """Validate `repo`'s workflows and Dependabot config against their schemas; audit them with zizmor."""
    github = repo / ".github"
    workflows = sorted(str(path) for path in (github / "workflows").glob("*.yml"))
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows, silent=True)
    session.run(
        "check-jsonschema", "--builtin-schema", "vendor.dependabot", str(github / "dependabot.yml"), silent=True
    )
    session.run("zizmor", "--offline", str(github), silent=True)


# Default sessions: `nox` runs these, in this order -------------------------------------------------


@nox.session
def lint(session: nox.Session) -> None:
    """Lint and type-check this repo; lint every rendered combination and its workflows."""
    install_test_requirements(session)  # mypy checks the code against the libraries it runs with
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check")
    session.run("ruff", "format", "--check")
    session.run("mypy")
    with session.chdir(WHEELHOUSE.PARITY):  # the harness, under its own (the generated repos') settings
        session.run("mypy")
    check_github(session, ROOT)
    for (layout, jax), combination in zip(COMBINATIONS, COMBINATION_IDS, strict=True):
        session.log(f"{combination}: ruff, the workflows and Dependabot config of the generated repo")
        project = render(session, layout, jax, workdir(session) / combination)
        with session.chdir(project):
            session.run("ruff", "check", silent=True)
            session.run("ruff", "format", "--check", silent=True)
        check_github(session, project)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the template's own test suite (pass pytest options after `--`)."""
    install_test_requirements(session)
    # One pytest worker per CPU, each taking whole test files (which share renders and fixtures);
    # `-- -n 0` runs in one process.
    # The slowest tests at the end of the log: where the default `nox`'s minutes go (README: Figures).
    durations = ["--durations=25", "--durations-min=20"]
    session.run("python", "-m", "pytest", "--numprocesses=logical", "--dist=loadfile", *durations, *session.posargs)


@nox.session
@nox.parametrize(("layout", "jax"), list(GENERATED_SESSIONS), ids=[combination_id(*c) for c in GENERATED_SESSIONS])
def generated(session: nox.Session, layout: str, jax: bool) -> None:
    """Render a combination (with Triton); run its own sessions on the CPU: the lint and the tests
    in split-jax, the type check and the tests in single."""
    session.install(requirement("test", "cookiecutter"))
    project = render(session, layout, jax, workdir(session) / "render")
    offline_wheels(session, project)
    # Where torch comes from pip's configuration, the generated repo installs with pip: uv ignores it.
    index_url = torch_index_url(session)
    session.env["TORCH_INDEX_URL"] = index_url
    backend = session.venv_backend if index_url else "virtualenv"
    # Options after `--` replace the session list: `-- -s tests -- -x` runs its tests, stopping early.
    sessions = ["-s", *GENERATED_SESSIONS[layout, jax]]
    run_generated(session, project, *(session.posargs or sessions), backend=backend)


# Opt-in sessions (default=False): focused, or for a GPU machine -----------------------------------


@nox.session(default=False)
def engines(session: nox.Session) -> None:
    """Compare cookiecutter's and copier's output for every combination (also part of `tests`)."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("python", "-m", "pytest", "tests/test_engines.py", *session.posargs)


@nox.session(default=False, allow_parallel=False)
def proofs(session: nox.Session) -> None:
    """The long proofs' shares beyond the default's quick passes (`pytest -m proof`): the zoos' other
    algorithms and the scaffold's other combinations, derandomized; then `generated(single)`, the
    fewest files in fresh environments. `.ci/run` runs it after `nox`."""
    install_test_requirements(session)
    session.run("python", "-m", "pytest", "-m", "proof", "--numprocesses=logical", "--dist=loadfile", *session.posargs)
    session.notify("generated(single)")


@nox.session(default=False)
def slurm_time_limit(session: nox.Session) -> None:
    """A Slurm job that meets a real time limit, requeues itself and finishes (1-1.5 minutes; needs
    root and Debian's slurm-wlm, munge, iproute2, else it skips and says why). `.ci/run` runs it."""
    install_test_requirements(session)
    session.run("python", "-m", "pytest", "-m", "time_limit", "tests/test_time_limit.py", *session.posargs)


@nox.session(default=False, tags=["cuda"], allow_parallel=False)
@nox.parametrize(("layout", "jax"), COMBINATIONS, ids=COMBINATION_IDS)
def generated_cuda(session: nox.Session, layout: str, jax: bool) -> None:
    """Render a combination (with Triton); run its `tests_cuda` on an NVIDIA GPU (skips without one)."""
    require_gpu = REQUIRE_GPU or "--require-gpu" in session.posargs
    # Decided before anything is installed: a CPU machine never downloads a CUDA build of torch.
    reason = TORCH_INDEX.why_no_gpu()
    if reason is not None and require_gpu:
        session.error(f"{reason}; a GPU is required here (REQUIRE_GPU=1 or --require-gpu)")
    if reason is not None:
        session.skip(f"{reason}. Set REQUIRE_GPU=1 (or pass `-- --require-gpu`) to fail instead")
    session.install(requirement("test", "cookiecutter"))
    project = render(session, layout, jax, workdir(session) / "render")
    offline_wheels(session, project)
    session.env["REQUIRE_GPU"] = "1"  # found above: the generated session must not skip
    pytest_args = [arg for arg in session.posargs if arg != "--require-gpu"]
    run_generated(session, project, "-s", "tests_cuda", "--", *pytest_args, backend=session.venv_backend)


@nox.session(default=False, allow_parallel=False)
def zoo(session: nox.Session) -> None:
    """Prove the generated tests never fail correct code and catch planted bugs (README: figures).

    The zoo's algorithms under fresh random seeds, default and thorough hypothesis profiles, and
    every planted bug; writes benchmarks/zoo.md and .json (`-- --seeds 2 --thorough-seeds 0` for a
    short run; `-- --help` for the options).
    """
    install_test_requirements(session)
    session.run("python", "-m", "benchmarks.zoo", "--output", "benchmarks/zoo", *session.posargs)


@nox.session(default=False, allow_parallel=False)
def benchmark(session: nox.Session) -> None:
    """Measure render, update, cold start, suite, dispatch, import and compile times (README table).

    Writes benchmarks/results.md and .json; `-- --sections dispatch,import` runs some parts only.
    """
    install_test_requirements(session)
    session.install("virtualenv")
    session.run("python", "-m", "benchmarks.run", "--output", "benchmarks/results", *session.posargs)


if __name__ == "__main__":
    nox.main()
