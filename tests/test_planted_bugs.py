"""The generated test suite catches realistic porting bugs.

Each case plants one bug, by editing the text of an implementation in a copy of a generated repo,
and runs that algorithm's generated test file, which must fail, first in the test that is meant to
catch it. Without a bug the same files pass. Bugs in the PyTorch and NumPy code are planted in a
single-layout repo and in a split-layout repo with JAX; JAX bugs in the latter. The algorithms are
the worked examples and algorithms scaffolded with `scripts/new_algorithm.py` then written (see
scaffolded.py): a user's own algorithm is tested as strongly as the examples.

No algorithm calls another, so bugs in different algorithms cannot meet: each round plants one bug
per algorithm in one copy of the repo and runs their test files in one pytest process (13 processes
for 35 bugs, each importing torch and JAX once), and each file's first failure is read from
pytest's JUnit XML report.

A device mix-up (a stray `.cpu()`) cannot show as a wrong device on a machine without a GPU: the
suite runs every PyTorch function on the `meta` device too (tensors with a shape, a dtype and a
device but no data), where moving data to the CPU or mixing in a CPU tensor is an error.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.render import Combination, Render
from tests.scaffolded import COMMANDS, implement, replace_once, scaffold, source

SINGLE = Combination("single", jax=False)
SPLIT_JAX = Combination("split", jax=True)


@dataclass(frozen=True)
class Bug:
    """A realistic mistake in porting `algorithm` to `backend`: `old` becomes `new`."""

    name: str
    algorithm: str  # softmax or cross_entropy, or one in scaffolded.COMMANDS
    backend: str  # numpy, pytorch or jax
    old: str
    new: str
    caught_by: str  # the generated test that fails first
    says: str = ""  # what its failure message must say

    def plant(self, repo: Path, combination: Combination) -> None:
        replace_once(source(repo, combination, self.algorithm, self.backend), self.old, self.new)


TORCH_BUGS = [
    Bug(
        "wrong-axis",  # normalised along the last axis, as in the 2-D example it was copied from
        "softmax",
        "pytorch",
        "return exp / exp.sum(dim=axis, keepdim=True)",
        "return exp / exp.sum(dim=-1, keepdim=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "missing-stabilisation",  # exp(x) overflows for large logits: inf / inf = nan
        "softmax",
        "pytorch",
        "shifted = x - x.amax(dim=axis, keepdim=True)",
        "shifted = x",
        caught_by="test_matches_reference",
    ),
    Bug(
        "missing-stabilisation-in-the-reference",
        "softmax",
        "numpy",
        "shifted = x - x.max(axis=axis, keepdims=True)",
        "shifted = x",
        caught_by="test_reference_does_not_overflow",
    ),
    Bug(
        "silent-downcast",  # .float() to make a dtype error go away
        "softmax",
        "pytorch",
        "exp = shifted.exp()",
        "exp = shifted.float().exp()",
        caught_by="test_matches_reference",
    ),
    Bug(
        "detached-normaliser",  # right values, wrong gradient
        "cross_entropy",
        "pytorch",
        "shifted.exp().sum(dim=-1, keepdim=True).log()",
        "shifted.exp().sum(dim=-1, keepdim=True).log().detach()",
        caught_by="test_gradient_matches_reference",
    ),
    Bug(
        "detached-output",
        "softmax",
        "pytorch",
        "return exp / exp.sum(dim=axis, keepdim=True)",
        "return (exp / exp.sum(dim=axis, keepdim=True)).detach()",
        caught_by="test_gradient_matches_reference",
    ),
    Bug(
        "wrong-reduction",  # summed over the batch instead of averaged
        "cross_entropy",
        "pytorch",
        "return -picked.mean()",
        "return -picked.sum()",
        caught_by="test_matches_reference",
    ),
    Bug(
        "device-mix-up",  # labels moved to the CPU, e.g. left over from debugging
        "cross_entropy",
        "pytorch",
        "labels.unsqueeze(-1)",
        "labels.cpu().unsqueeze(-1)",
        caught_by="test_stays_on_the_input_device",
    ),
]
JAX_BUGS = [
    Bug(
        "jax-missing-stabilisation",
        "softmax",
        "jax",
        "shifted = x - jnp.max(x, axis=axis, keepdims=True)",
        "shifted = x",
        caught_by="test_matches_reference",
    ),
    Bug(
        "jax-silent-downcast",
        "cross_entropy",
        "jax",
        "return -jnp.mean(picked)",
        "return -jnp.mean(picked).astype(jnp.float32)",
        caught_by="test_matches_reference",
    ),
]
# In scaffolded algorithms: a parameter, the stabilisation, a later operand's gradient, a NumPy scalar.
SCAFFOLDED_BUGS = [
    Bug(
        "scaffolded-numpy-scalar",  # indexing with () turns a 0-d result into a NumPy scalar
        "logsumexp",
        "numpy",
        "np.squeeze(total, axis=axis)",
        "np.squeeze(total, axis=axis)[()]",
        caught_by="test_matches_reference",
        says="returned a NumPy scalar",
    ),
    Bug(
        "scaffolded-ignored-parameter",  # scale taken as 1/sqrt(d) whatever the caller passes
        "attention",
        "pytorch",
        "scores = q @ k.transpose(-1, -2) * (d**-0.5 if scale is None else scale)",
        "scores = q @ k.transpose(-1, -2) * d**-0.5",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-ignored-axis",
        "logsumexp",
        "pytorch",
        "(x - m).exp().sum(dim=axis, keepdim=True)",
        "(x - m).exp().sum(dim=-1, keepdim=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-missing-stabilisation",
        "attention",
        "pytorch",
        "scores = scores - scores.amax(dim=-1, keepdim=True)",
        "scores = scores",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-detached-operand",  # v's gradient cut: right values, q and k still learn
        "attention",
        "pytorch",
        "return weights / weights.sum(dim=-1, keepdim=True) @ v",
        "return weights / weights.sum(dim=-1, keepdim=True) @ v.detach()",
        caught_by="test_gradient_matches_reference",
    ),
    Bug(
        "scaffolded-silent-downcast",
        "attention",
        "pytorch",
        "weights = scores.exp()",
        "weights = scores.float().exp()",
        caught_by="test_matches_reference",
    ),
]
SCAFFOLDED_JAX_BUGS = [
    Bug(
        "scaffolded-jax-ignored-parameter",
        "attention",
        "jax",
        "scores = q @ jnp.swapaxes(k, -1, -2) * (d**-0.5 if scale is None else scale)",
        "scores = q @ jnp.swapaxes(k, -1, -2) * d**-0.5",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-jax-ignored-axis",
        "logsumexp",
        "jax",
        "jnp.sum(jnp.exp(x - m), axis=axis, keepdims=True)",
        "jnp.sum(jnp.exp(x - m), axis=-1, keepdims=True)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-jax-missing-stabilisation",
        "attention",
        "jax",
        "scores = scores - jnp.max(scores, axis=-1, keepdims=True)",
        "scores = scores",
        caught_by="test_matches_reference",
    ),
    Bug(
        "scaffolded-jax-detached-operand",
        "attention",
        "jax",
        "return weights / jnp.sum(weights, axis=-1, keepdims=True) @ v",
        "return weights / jnp.sum(weights, axis=-1, keepdims=True) @ jax.lax.stop_gradient(v)",
        caught_by="test_gradient_matches_reference",
    ),
    Bug(
        "scaffolded-jax-silent-downcast",
        "attention",
        "jax",
        "weights = jnp.exp(scores)",
        "weights = jnp.exp(scores).astype(jnp.float32)",
        caught_by="test_matches_reference",
    ),
]
SINGLE_BUGS = TORCH_BUGS + SCAFFOLDED_BUGS
SPLIT_JAX_BUGS = TORCH_BUGS + JAX_BUGS + SCAFFOLDED_BUGS + SCAFFOLDED_JAX_BUGS
ALGORITHMS = ["softmax", "cross_entropy", *COMMANDS]


def rounds(bugs: list[Bug]) -> list[tuple[Bug, ...]]:
    """`bugs` in rounds of at most one bug per algorithm."""
    by_algorithm: dict[str, list[Bug]] = {}
    for bug in bugs:
        by_algorithm.setdefault(bug.algorithm, []).append(bug)
    return [tuple(filter(None, round_)) for round_ in itertools.zip_longest(*by_algorithm.values())]


ROUNDS = {SINGLE: rounds(SINGLE_BUGS), SPLIT_JAX: rounds(SPLIT_JAX_BUGS)}
CASES = [
    pytest.param(combination, bug, id=f"{combination.id}-{bug.name}")
    for combination, bugs in [(SINGLE, SINGLE_BUGS), (SPLIT_JAX, SPLIT_JAX_BUGS)]
    for bug in bugs
]


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


RunRound = Callable[[Combination, tuple[Bug, ...]], Round]  # the `run_round` fixture


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


@pytest.fixture(scope="module")
def run_round(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> RunRound:
    """run_round(combination, bugs) -> the Round, run once per module; no bugs: every algorithm."""
    written: dict[Combination, Path] = {}
    done: dict[tuple[Combination, tuple[Bug, ...]], Round] = {}

    def run(combination: Combination, bugs: tuple[Bug, ...]) -> Round:
        if combination not in written:  # the scaffolded algorithms, written once per combination
            repo = Path(
                shutil.copytree(rendered("cookiecutter", combination), tmp_path_factory.mktemp("written") / "repo")
            )
            for algorithm in COMMANDS:
                scaffold(repo, algorithm)
                implement(repo, combination, algorithm)
            written[combination] = repo
        if (combination, bugs) not in done:
            work = tmp_path_factory.mktemp(f"round-{combination.id}")
            repo = Path(shutil.copytree(written[combination], work / "repo"))
            for bug in bugs:
                bug.plant(repo, combination)
            algorithms = [bug.algorithm for bug in bugs] or ALGORITHMS
            result = run_tests(repo, algorithms, work)
            output = result.stdout + result.stderr
            done[combination, bugs] = Round(result.returncode, output, first_failures(work / "junit.xml"))
        return done[combination, bugs]

    return run


# A pytest plugin: `-x` for each test file on its own. The tests after a file's first failure would
# only fail too, at length; the other files of the round go on.
STOP_EACH_FILE_AT_ITS_FIRST_FAILURE = """
import pytest

failed_files = set()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.nodeid.partition("::")[0] in failed_files:
        pytest.skip("an earlier test of this file failed")


def pytest_runtest_logreport(report):
    if report.failed:
        failed_files.add(report.nodeid.partition("::")[0])
"""


def run_tests(repo: Path, algorithms: list[str], work: Path) -> subprocess.CompletedProcess[str]:
    """The generated tests of `algorithms`, each file stopping at its first failure, with the CI
    profile (derandomized): which test catches a bug is then the same on every run, as in CI.
    Writes work/junit.xml."""
    (work / "stop_each_file_at_its_first_failure.py").write_text(STOP_EACH_FILE_AT_ITS_FIRST_FAILURE, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "REQUIRE_DEVICE"}
    env |= {"HYPOTHESIS_PROFILE": "ci", "PYTHONPATH": os.pathsep.join([str(repo / "src"), str(work)])}
    files = [f"tests/test_{algorithm}.py" for algorithm in algorithms]
    options = [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "stop_each_file_at_its_first_failure",
        f"--junitxml={work / 'junit.xml'}",
    ]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *files, *options],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("combination", "bug"), CASES)
def test_generated_suite_catches(run_round: RunRound, combination: Combination, bug: Bug) -> None:
    (bugs,) = [round_ for round_ in ROUNDS[combination] if bug in round_]
    result = run_round(combination, bugs)
    assert result.returncode == 1, result.output
    first = result.first_failures.get(bug.algorithm)
    assert first is not None, f"the suite did not catch {bug.name}:\n{result.output}"
    assert first.kind == "failure", first.report
    assert first.test.startswith(bug.caught_by), f"{bug.name} was caught first by {first.test}:\n{first.report}"
    assert bug.says in first.report, first.report


@pytest.mark.slow
@pytest.mark.parametrize("combination", [SINGLE, SPLIT_JAX], ids=lambda combination: combination.id)
def test_generated_suite_passes_without_bugs(run_round: RunRound, combination: Combination) -> None:
    result = run_round(combination, ())
    assert result.returncode == 0, result.output
