"""Constraints that a `Spec` states, in algorithms scaffolded with `parity new` and
written as a researcher would (tests/scaffolded.py, `CONSTRAINED`): integer labels below the
number of classes (`nll`), an even last axis (`rotary`), channels a multiple of a parameter
(`group_sum`), and a dtype that a port does not support.

Their generated tests compare values out of the box, on every backend (JAX's fixed sizes honour
the constraints), and pass; a bug planted in a port, JAX's included, is caught; a port that
raises only in float16 fails with a message that points at SPEC's dtypes, and once float16 is
left out there, its tests are skipped with the reason. All of it in two combinations, as in
test_planted_bugs.py: the split layout with JAX in the default `nox`, the single one without it in
`nox -s proofs` (the constraints are the harness's, whatever the layout; test_scaffold.py
scaffolds in every combination).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.planted import Bug, rounds, run_round
from tests.render import BIN, Combination, quick_share, run
from tests.scaffolded import CONSTRAINED, implement, replace_once, scaffold
from tests.test_scaffold import environment, pytest_in

CHECKED_IN = (Combination("single", jax=False), Combination("split", jax=True))

BUGS = [
    Bug(
        "rotary-halves",  # GPT-NeoX's layout (first half, second half) for GPT-J's interleaved pairs
        "rotary",
        "pytorch",
        "torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)",
        "torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)",
        caught_by="test_matches_reference",
        says="times the",
    ),
    Bug(
        "rotary-halves-jax",  # invisible with one pair: JAX's fixed size of d must be 4, not 2
        "rotary",
        "jax",
        "jnp.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1).reshape(x.shape)",
        "jnp.concatenate([even * cos - odd * sin, even * sin + odd * cos], axis=-1)",
        caught_by="test_matches_reference",
        says="times the",
    ),
    Bug(
        "nll-softmax-over-the-batch",
        "nll",
        "pytorch",
        "torch.log_softmax(logits, dim=-1)",
        "torch.log_softmax(logits, dim=0)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "nll-take-for-take-along-axis-jax",  # every row's log-probabilities at every label
        "nll",
        "jax",
        "jnp.take_along_axis(log_probabilities, labels[..., None], axis=-1)",
        "jnp.take(log_probabilities, labels, axis=-1)",
        caught_by="test_matches_reference",
    ),
    Bug(
        "group-sum-strided-groups",  # channels c, c + G, c + 2G, ... summed: right for 1 group only
        "group_sum",
        "pytorch",
        "x.reshape(*x.shape[:-1], groups, x.shape[-1] // groups).sum(dim=-1)",
        "x.reshape(*x.shape[:-1], x.shape[-1] // groups, groups).sum(dim=-2)",
        caught_by="test_matches_reference",
        says="times the",
    ),
    Bug(
        "group-sum-strided-groups-jax",
        "group_sum",
        "jax",
        "x.reshape(*x.shape[:-1], groups, x.shape[-1] // groups).sum(axis=-1)",
        "x.reshape(*x.shape[:-1], x.shape[-1] // groups, groups).sum(axis=-2)",
        caught_by="test_matches_reference",
        says="times the",
    ),
    Bug(
        "no-float16-kernel",  # as torch.linalg.cholesky or an FFT on a CPU
        "group_sum",
        "pytorch",
        "return x.reshape(",
        'if x.dtype == torch.float16:\n        raise RuntimeError("no float16 kernel")\n    return x.reshape(',
        caught_by="test_matches_reference",
        says="leave it out of SPEC's dtypes",
    ),
]
TESTS = [f"tests/test_{algorithm}.py" for algorithm in CONSTRAINED]


def summary_of(result_stdout: str) -> str:
    return result_stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("combination", quick_share(CHECKED_IN, CHECKED_IN[-1:], ids=lambda c: c.id))
def test_constrained_algorithms_compare_and_catch_bugs(
    repo: Path, combination: Combination, mypy_cache: Path, tmp_path: Path
) -> None:
    for algorithm in CONSTRAINED:
        scaffold(repo, algorithm)
    tests = {path: (repo / path).read_text(encoding="utf-8") for path in TESTS}
    assert 'integers={"labels": (0, "c")}' in tests["tests/test_nll.py"]
    assert 'multiples={"d": 2}' in tests["tests/test_rotary.py"]
    assert 'multiples={"c": "groups"}' in tests["tests/test_group_sum.py"]
    assert 'parameters={"groups": groups}' in tests["tests/test_group_sum.py"]

    # The stubs: expected failures, nothing fails.
    stubs = pytest_in(repo, *TESTS)
    assert "xfailed" in summary_of(stubs.stdout), stubs.stdout
    assert not re.search(r"\d+ (failed|error)", summary_of(stubs.stdout)), stubs.stdout

    # Written: lint-clean (once `ruff check --fix` drops the stubs' import, as the scaffold says),
    # mypy-clean, and every port compared with the reference.
    for algorithm in CONSTRAINED:
        implement(repo, combination, algorithm)
    run([BIN / "ruff", "check", "--fix", "--no-cache", "."], cwd=repo)
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)
    run([BIN / "mypy", "--cache-dir", mypy_cache], cwd=repo, env=environment(repo))
    result = pytest_in(repo, *TESTS, "-v")
    assert re.search(r"\d+ passed", summary_of(result.stdout)), result.stdout
    assert not re.search(r"failed|error|xfail|xpass", summary_of(result.stdout)), result.stdout
    ports = ["torch", *(["jax"] if combination.jax else [])]
    for algorithm in CONSTRAINED:
        for port in ports:
            ran = f"tests/test_{algorithm}.py::test_matches_reference[{port}-float64-cpu] PASSED"
            assert ran in result.stdout, result.stdout
    # An operand of integers is refused as floats, and floats as integers.
    assert "tests/test_nll.py::test_rejects_unsupported_inputs PASSED" in result.stdout

    # Bugs in the ports, JAX's where the repo has JAX, each caught.
    work = tmp_path / "work"
    for round_ in rounds([bug for bug in BUGS if bug.backend != "jax" or combination.jax]):
        copy = Path(shutil.copytree(repo, tmp_path / "planted"))
        work.mkdir()
        for bug in round_:
            bug.plant(copy, combination)
        caught = run_round(copy, [bug.algorithm for bug in round_], work, planted=True)
        for bug in round_:
            caught.check_caught(bug)
        shutil.rmtree(copy)
        shutil.rmtree(work)

    # The port without a float16 kernel, declared in its SPEC: float16 is skipped, with the reason.
    BUGS[-1].plant(repo, combination)
    replace_once(repo / "tests/test_group_sum.py", "dtypes=parity.DTYPES", 'dtypes=("float64", "float32", "bfloat16")')
    declared = pytest_in(repo, "tests/test_group_sum.py", "-rs")
    assert "failed" not in summary_of(declared.stdout), declared.stdout
    assert "float16: not among the dtypes its SPEC supports" in declared.stdout
