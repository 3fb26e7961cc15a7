"""Bugs planted in a generated repo, and its test files run in rounds: what the planted-bug tests
of the worked examples (test_planted_bugs.py) and of the zoo (test_zoo.py) share.

No algorithm calls another, so bugs in different algorithms cannot meet: each round plants one bug
per algorithm in one copy of the repo and runs their test files in one pytest process, each file
stopping at its first failure, whose test and report are read from pytest's JUnit XML report.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from tests.render import Combination
from tests.scaffolded import function_named, source


@dataclass(frozen=True)
class Bug:
    """A realistic mistake in porting `algorithm` to `backend`: `old` becomes `new`."""

    name: str
    algorithm: str
    backend: str  # numpy, pytorch, jax, triton (its kernels), or array_api (a shared implementation)
    old: str
    new: str
    caught_by: str = "test_"  # the generated test that fails first (a prefix of its name)
    says: str = ""  # what its failure message must say
    function: str = ""  # where `old` is, if not in ``_<algorithm>_<backend>`` (a Triton kernel)

    def plant(self, repo: Path, combination: Combination) -> None:
        """`old` becomes `new` in `function`, where it must be once."""
        path = source(repo, combination, self.algorithm, self.backend)
        text = path.read_text(encoding="utf-8")
        name = self.function or f"_{self.algorithm}_{self.backend}"
        node = function_named(text, name)
        lines = text.splitlines(keepends=True)
        function = "".join(lines[node.lineno - 1 : node.end_lineno])
        assert function.count(self.old) == 1, f"{self.old!r} is not once in {name} of {path}:\n{function}"
        planted = function.replace(self.old, self.new)
        path.write_text("".join([*lines[: node.lineno - 1], planted, *lines[node.end_lineno :]]), encoding="utf-8")


def rounds(bugs: Sequence[Bug]) -> list[tuple[Bug, ...]]:
    """`bugs` in rounds of at most one bug per algorithm."""
    by_algorithm: dict[str, list[Bug]] = {}
    for bug in bugs:
        by_algorithm.setdefault(bug.algorithm, []).append(bug)
    return [tuple(filter(None, round_)) for round_ in itertools.zip_longest(*by_algorithm.values())]


@dataclass(frozen=True)
class FirstFailure:
    """The first test of a file that failed or errored, and its report."""

    test: str  # the test's name, parameters included
    kind: str  # "failure" or "error"
    report: str


@dataclass(frozen=True)
class Round:
    """What one pytest run over the test files of a round's algorithms gave."""

    returncode: int
    output: str
    first_failures: dict[str, FirstFailure]  # by algorithm; absent where every test passed

    def check_passed(self) -> None:
        """Fail unless every test passed: each algorithm's first failure, else the whole output."""
        failed = {name: f"{first.test}: {first.report[:2000]}" for name, first in self.first_failures.items()}
        assert self.returncode == 0, failed or self.output

    def check_caught(self, bug: Bug) -> None:
        """Fail unless `bug` failed its algorithm's tests first in `bug.caught_by`, saying `bug.says`."""
        assert self.returncode == 1, self.output
        first = self.first_failures.get(bug.algorithm)
        assert first is not None, f"the suite did not catch {bug.name}:\n{self.output}"
        assert first.kind == "failure", first.report
        assert first.test.startswith(bug.caught_by), f"{bug.name} was caught first by {first.test}:\n{first.report}"
        assert bug.says in first.report, first.report


def first_failures(junit_xml: Path) -> dict[str, FirstFailure]:
    """Each test file's first failed or errored test, by algorithm (tests/test_ALGORITHM.py):
    the JUnit report lists tests in the order they ran."""
    found: dict[str, FirstFailure] = {}
    for case in ElementTree.parse(junit_xml).iter("testcase"):
        algorithm = case.get("classname", "").removeprefix("tests.test_")
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None and algorithm not in found:
            report = f"{problem.get('message', '')}\n{problem.text or ''}"
            found[algorithm] = FirstFailure(case.get("name", ""), problem.tag, report)
    return found


# A pytest plugin: `-x` for each test file on its own. The tests after a file's first failure would
# only fail too, at length; the other files of the round go on. With PLANTED=1 hypothesis
# reports the first failing example as drawn: a planted bug's round asks which test fails and what
# it says, not the smallest example (shrinking took most of a round's time).
STOP_EACH_FILE_AT_ITS_FIRST_FAILURE = """
import os

import pytest
from hypothesis import Phase, settings

failed_files = set()


@pytest.hookimpl(trylast=True)  # after parity and hypothesis have loaded the profile
def pytest_configure(config):
    if os.environ.get("PLANTED") == "1":
        phases = [phase for phase in Phase if phase not in {Phase.shrink, Phase.explain}]
        settings.register_profile("unshrunk", settings(), phases=phases)
        settings.load_profile("unshrunk")


def pytest_sessionstart(session):
    failed_files.clear()  # several sessions may run in one process (one per seed)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.nodeid.partition("::")[0] in failed_files:
        pytest.skip("an earlier test of this file failed")


def pytest_runtest_logreport(report):
    if report.failed:
        failed_files.add(report.nodeid.partition("::")[0])
"""


# Runs test files under several seeds in one process (imports and JAX's compilations are paid once),
# without the example database, so that no seed replays another's failure.
SEED_RUNNER = """
import shutil, sys
import pytest

files, seeds, work = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3]
for seed in seeds:
    shutil.rmtree(".hypothesis", ignore_errors=True)
    options = ["-q", "-p", "no:cacheprovider", "-p", "stop_each_file_at_its_first_failure"]
    pytest.main([*files, *options, f"--hypothesis-seed={seed}", f"--junitxml={work}/junit-{seed}.xml"])
"""
# Seeds per process: hypothesis nests its settings once per pytest session, and a few hundred
# sessions in one process exceed Python's recursion limit.
SEEDS_PER_PROCESS = 50


def _environment(repo: Path, work: Path, profile: str, *, planted: bool = False) -> dict[str, str]:
    """The generated package and the plugin importable, the hypothesis profile chosen."""
    (work / "stop_each_file_at_its_first_failure.py").write_text(STOP_EACH_FILE_AT_ITS_FIRST_FAILURE, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in {"REQUIRE_DEVICE", "CI"}}
    path = os.pathsep.join([str(repo / "src"), str(work)])
    return env | {"HYPOTHESIS_PROFILE": profile, "PYTHONPATH": path, "PLANTED": str(int(planted))}


def run_round(repo: Path, algorithms: Sequence[str], work: Path, *, planted: bool) -> Round:
    """The generated tests of `algorithms` in `repo`, each file stopping at its first failure, with
    the CI profile (derandomized): which test catches a bug is then the same on every run, as in
    CI. Where bugs are `planted`, failing examples are not shrunk. Writes work/junit.xml."""
    files = [f"tests/test_{algorithm}.py" for algorithm in algorithms]
    options = [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "stop_each_file_at_its_first_failure",
        f"--junitxml={work / 'junit.xml'}",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *files, *options],
        cwd=repo,
        env=_environment(repo, work, "ci", planted=planted),
        capture_output=True,
        text=True,
        check=False,
    )
    return Round(result.returncode, result.stdout + result.stderr, first_failures(work / "junit.xml"))


def run_each_round(
    repo: Path,
    rounds_of_bugs: Sequence[tuple[Bug, ...]],
    everything: Sequence[str],
    combination: Combination,
    new_folder: Callable[[], Path],
) -> dict[tuple[Bug, ...], Round]:
    """`repo` as it is (key (), the test files of the algorithms in `everything`), then each
    round's bugs planted in a copy of it (in a folder from `new_folder`), run by `run_round`."""
    done = {}
    for bugs in [(), *rounds_of_bugs]:
        work = new_folder()
        copy = Path(shutil.copytree(repo, work / "repo"))
        for bug in bugs:
            bug.plant(copy, combination)
        done[bugs] = run_round(copy, [bug.algorithm for bug in bugs] or everything, work, planted=bool(bugs))
    return done


def run_seeds(
    repo: Path, algorithms: Sequence[str], seeds: Sequence[int], work: Path, profile: str = "fast"
) -> dict[int, dict[str, FirstFailure]]:
    """The generated tests of `algorithms` in `repo` under each of `seeds` with the hypothesis
    `profile` (``fast``: as on a laptop; ``thorough``), no example database: for each seed, each
    file's first failure, by algorithm (none where every test passed)."""
    files = ",".join(f"tests/test_{algorithm}.py" for algorithm in algorithms)
    env = _environment(repo, work, profile)
    found = {}
    for start in range(0, len(seeds), SEEDS_PER_PROCESS):
        batch = [str(seed) for seed in seeds[start : start + SEEDS_PER_PROCESS]]
        command = [sys.executable, "-c", SEED_RUNNER, files, ",".join(batch), str(work)]
        subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
        for seed in batch:
            junit = work / f"junit-{seed}.xml"
            if not junit.is_file():
                msg = f"no report for seed {seed}: the test run in {repo} stopped early"
                raise RuntimeError(msg)
            found[int(seed)] = first_failures(junit)
    return found
