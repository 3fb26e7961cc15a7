"""The zoo (tests/zoo/): correct algorithms pass their generated tests, and planted bugs fail them.

Derandomized as CI runs, in two shares: the default `nox`'s quick pass over every sixth algorithm of
the zoo, `nox -s proofs`'s over those halfway between. Each, scaffolded with the generated repo's
`parity new` and written as its author wrote it, passes every test of its generated file; each of
their planted bugs fails its algorithm's file (a failure, not an error), in rounds of one bug per
algorithm (tests/planted.py). `nox -s zoo` runs the long proof over all of them: fresh random seeds,
the default and the thorough hypothesis profiles, every planted bug (benchmarks/zoo.py, README.md's
figures).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests import zoo
from tests.planted import Bug
from tests.render import Render

ALGORITHMS = zoo.algorithms()
BUGS = [bug for algorithm in ALGORITHMS for bug in algorithm.bugs]
# The quick share: every sixth algorithm (9 of 50, in the zoo's order); `nox -s proofs` those
# halfway between (8). Together, every third: the default `nox`'s share until it outgrew its
# 25 minutes (3.8 of them, with the layout check: docs/measurements.md).
SHARES = {"quick": ALGORITHMS[::6], "more": ALGORITHMS[3::6]}


@pytest.fixture(scope="module")
def outcomes(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], zoo.Outcomes]:
    """outcomes(share) -> each round of the share's bugs, planted and run, by its bugs; () is the
    share without bugs."""
    return zoo.outcomes_by_share(rendered, SHARES, tmp_path_factory)


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
@pytest.mark.parametrize("share", zoo.share_params(SHARES))
def test_correct_algorithms_pass(outcomes: Callable[[str], zoo.Outcomes], share: str) -> None:
    outcomes(share)[()].check_passed()


@pytest.mark.slow
@pytest.mark.parametrize(("share", "bug"), zoo.bug_params(SHARES))
def test_planted_bug_is_caught(outcomes: Callable[[str], zoo.Outcomes], share: str, bug: Bug) -> None:
    zoo.round_of(outcomes(share), bug).check_caught(bug)
