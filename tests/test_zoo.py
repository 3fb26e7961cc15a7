"""The zoo (tests/zoo/): correct algorithms pass their generated tests, and planted bugs fail them.

A quick pass, derandomized as CI runs, over every third algorithm of the zoo (17 of 50, in the
zoo's order): each, scaffolded with the generated repo's `parity new` and written as its author
wrote it, passes every test of its generated test file; each of their planted bugs fails its
algorithm's file (a failure, not an error), in rounds of one bug per algorithm (tests/planted.py).
`nox -s zoo` runs the long proof over all of them: fresh random seeds, the default and the
thorough hypothesis profiles, every planted bug (benchmarks/zoo.py, README.md's figures).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import zoo
from tests.planted import Bug, Round, rounds, run_each_round
from tests.render import Render

ALGORITHMS = zoo.algorithms()
BUGS = [bug for algorithm in ALGORITHMS for bug in algorithm.bugs]
# The quick pass's share: the whole zoo took 4 of the default `nox`'s CPU minutes.
QUICK = ALGORITHMS[::3]
QUICK_BUGS = [bug for algorithm in QUICK for bug in algorithm.bugs]
ROUNDS = rounds(QUICK_BUGS)


@pytest.fixture(scope="module")
def written(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated repo with the quick pass's algorithms written into it."""
    into = tmp_path_factory.mktemp("zoo") / "repo"
    return zoo.written(rendered("cookiecutter", zoo.COMBINATION), QUICK, into)


@pytest.fixture(scope="module")
def outcomes(written: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[Bug, ...], Round]:
    """Each round of bugs, planted and run, by its bugs; () is the zoo without bugs."""
    return run_each_round(
        written, ROUNDS, [a.name for a in QUICK], zoo.COMBINATION, lambda: tmp_path_factory.mktemp("round")
    )


def test_the_zoo_covers_the_kinds_of_algorithms_researchers_write() -> None:
    assert len(ALGORITHMS) >= 20
    assert all(algorithm.bugs for algorithm in ALGORITHMS), "every algorithm has a bug to plant"
    assert sum(bug.backend == "jax" for bug in BUGS) >= 8
    shared = [algorithm for algorithm in ALGORITHMS if "array_api" in algorithm.bodies]
    assert len(shared) >= 6, "the Array API style, on algorithms written apart from its harness"
    kinds = " ".join(bug.name for bug in BUGS if bug.backend == "array_api")
    for kind in ("wrong-axis", "dropped-stabilisation", "numpy-call", "downcast"):
        assert kind in kinds, f"no planted {kind} in a shared implementation"


@pytest.mark.slow
def test_correct_algorithms_pass(outcomes: dict[tuple[Bug, ...], Round]) -> None:
    outcomes[()].check_passed()


@pytest.mark.slow
@pytest.mark.parametrize("bug", QUICK_BUGS, ids=lambda bug: bug.name)
def test_planted_bug_is_caught(outcomes: dict[tuple[Bug, ...], Round], bug: Bug) -> None:
    (bugs,) = [round_ for round_ in ROUNDS if bug in round_]
    outcomes[bugs].check_caught(bug)
