"""The special zoo (tests/special_zoo/): functions the project did not design, from SciPy's special
functions and the libraries' elementwise and reduction operations, pass their generated tests; each
one's planted bug fails them.

As tests/test_zoo.py, derandomized as CI runs, in two shares (the default `nox`'s quick pass over
every fourth function, `nox -s proofs`'s over the others): each function scaffolded with the
generated repo's `parity new` and written as its author wrote it passes every test of its file
(where it has no JAX port, the JAX tests stay "not implemented yet"); every function has one bug, so
all the bugs are planted in one round. `python -m benchmarks.zoo --zoo special` runs the long proof
under fresh seeds.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests import zoo
from tests.planted import Bug, rounds
from tests.render import Render

PACKAGE = "tests.special_zoo"
ALGORITHMS = zoo.algorithms(PACKAGE)
BUGS = [bug for algorithm in ALGORITHMS for bug in algorithm.bugs]
NAMES = {algorithm.name for algorithm in ALGORITHMS}
# The default `nox`'s quick share: every fourth function (15 of 57, each kind among them); `nox -s
# proofs` the others. All of them took 5.7 of the default's minutes (docs/measurements.md).
QUICK = ALGORITHMS[::4]
SHARES = {"quick": QUICK, "more": [algorithm for algorithm in ALGORITHMS if algorithm not in QUICK]}

#: What the zoo is for, each kind with the functions that stand for it.
KINDS = {
    "poles": {"reciprocal", "rsqrt", "tan", "cotangent", "digamma", "trigamma", "gamma", "lgamma"},
    "branch cuts and signed zeros": {"atan2", "angle", "copysign", "sign", "log_abs"},
    "whole-number results": {"floor", "ceil", "trunc", "round_decimals", "floor_divide", "remainder", "fmod"},
    "library precision": {"bessel_j0", "bessel_y1", "airy_ai", "erfinv", "erfcx", "log_ndtr", "ndtri", "hurwitz_zeta"},
    "reductions": {"logsumexp_axis", "logcumsumexp", "cummax", "prod", "vector_norm"},
}


@pytest.fixture(scope="module")
def outcomes(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], zoo.Outcomes]:
    """outcomes(share) -> the share without bugs (key ()), then with every bug planted (one round)."""
    return zoo.outcomes_by_share(rendered, SHARES, tmp_path_factory)


def test_the_special_zoo_covers_hard_numerics() -> None:
    assert len(ALGORITHMS) >= 40
    assert all(len(algorithm.bugs) == 1 for algorithm in ALGORITHMS), "one bug per function: one round"
    assert len(rounds(BUGS)) == 1
    assert sum(bug.backend == "jax" for bug in BUGS) >= 12
    for kind, names in KINDS.items():
        assert len(names & NAMES) >= 3, f"too few functions for {kind}: {sorted(names & NAMES)}"
        assert names & {algorithm.name for algorithm in QUICK}, f"the quick share has no function for {kind}"
    undifferentiable = [a.name for a in ALGORITHMS if "--no-gradient" in a.scaffold]
    assert len(undifferentiable) >= 3, f"no-gradient declarations: {undifferentiable}"
    assert len([a for a in ALGORITHMS if a.tolerances]) >= 3, "tolerances measured for the libraries' precision"
    domains = [a.name for a in ALGORITHMS if any(isinstance(v, str) for v in a.values.values())]
    assert len(domains) >= 5, f"interval domains: {domains}"
    assert [a.name for a in ALGORITHMS if "jax" not in a.bodies], "a function JAX lacks keeps its stub"
    kinds = " ".join(bug.name for bug in BUGS)
    for kind in ("downcast", "in-place", "detach", "wrong-axis", "clamp", "log-instead-of-log1p", "wrong-branch"):
        assert kind in kinds, f"no planted {kind}"


@pytest.mark.slow
@pytest.mark.parametrize("share", zoo.share_params(SHARES))
def test_correct_functions_pass(outcomes: Callable[[str], zoo.Outcomes], share: str) -> None:
    outcomes(share)[()].check_passed()


@pytest.mark.slow
@pytest.mark.parametrize(("share", "bug"), zoo.bug_params(SHARES))
def test_planted_bug_is_caught(outcomes: Callable[[str], zoo.Outcomes], share: str, bug: Bug) -> None:
    zoo.round_of(outcomes(share), bug).check_caught(bug)
