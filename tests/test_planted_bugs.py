"""The generated test suite catches realistic porting bugs.

Each case plants one bug, by editing the text of an implementation in a copy of a generated repo,
and runs that algorithm's generated test file, which must fail, first in the test that is meant to
catch it. Without a bug the same files pass. Bugs in the PyTorch and NumPy code are planted in a
single-layout repo with Triton and in a split-layout repo with JAX; JAX bugs in the latter, Triton
kernels' bugs in the former (the kernels run in Triton's interpreter). The algorithms are
the worked examples and algorithms scaffolded with `parity new` then written (see
scaffolded.py; their bugs: scaffolded_bugs.py): a user's own algorithm is tested as strongly as
the examples.

The bugs run in rounds, one bug per algorithm each (tests/planted.py), each round one pytest
process importing torch and JAX once. The bugs of both combinations (PyTorch's, the scaffolded
algorithms', the four in the second style: one shared Array API implementation, `ARRAY_API_BUGS`)
are planted in the single layout by `nox -s proofs`, the default `nox` planting each bug once.

A device mix-up (a stray `.cpu()`) cannot show as a wrong device on a machine without a GPU: the
suite runs every PyTorch function on the `meta` device too (tensors with a shape, a dtype and a
device but no data), where moving data to the CPU or mixing in a CPU tensor is an error.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.planted import Bug, Round, rounds, run_round
from tests.render import Combination, Render
from tests.scaffolded import COMMANDS, implement, scaffold
from tests.scaffolded_bugs import ARRAY_API_BUGS, SCAFFOLDED_BUGS, SCAFFOLDED_JAX_BUGS
from tests.zoo import SHARE_MARKS

SINGLE = Combination("single", jax=False, triton=True)
SPLIT_JAX = Combination("split", jax=True)


TORCH_BUGS = [
    Bug(
        "wrong-axis",  # normalised along the last axis, as in the 2-D example it was copied from
        "softmax",
        "pytorch",
        "return exp / exp.sum(dim=axis, keepdim=True)",
        "return exp / exp.sum(dim=-1, keepdim=True)",
        caught_by="test_matches_reference",
        says="times the",  # how far beyond what is allowed
    ),
    Bug(
        "in-place-shift",  # "saves memory", and changes the caller's array
        "softmax",
        "pytorch",
        "shifted = x - x.amax(dim=axis, keepdim=True)",
        "shifted = x.sub_(x.amax(dim=axis, keepdim=True))",
        caught_by="test_matches_reference",
        says="changed its operand x in place",
    ),
    Bug(
        "labels-of-one-batch-axis",  # right for 1-d labels only; raises for the others
        "cross_entropy",
        "pytorch",
        "labels.unsqueeze(-1)",
        "labels.unsqueeze(1)",
        caught_by="test_matches_reference",
        says="where the NumPy reference returns a result of shape",
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
        "view-flatten",  # rows flattened as for F.cross_entropy: view raises on a transposed x
        "cross_entropy",
        "pytorch",
        "picked = log_probabilities.gather(-1, labels.unsqueeze(-1))",
        "rows = log_probabilities.view(-1, log_probabilities.shape[-1])\n"
        "    picked = rows.gather(-1, labels.view(-1, 1))",
        caught_by="test_matches_reference",
        says="a transposed view of its last two axes",
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
# Bugs in the Triton port's kernels (single layout), run in Triton's interpreter on CPU.
TRITON_BUGS = [
    Bug(
        "triton-mask-drops-last-partial-block",  # whole blocks only: the tail of a row never written
        "softmax",
        "triton",
        "inside = offset + lanes < n\n        x = tl.load(x_ptr + start + offset + lanes, mask=inside)",
        "inside = offset + BLOCK <= n\n        x = tl.load(x_ptr + start + offset + lanes, mask=inside)",
        caught_by="test_matches_reference",
        function="_forward_kernel",
    ),
    Bug(
        "triton-missing-maximum-subtraction",  # exp(x) overflows for large logits: inf / inf = nan
        "softmax",
        "triton",
        "total = total * tl.exp(maximum - grown) + tl.sum(tl.exp(x - grown), axis=0)\n        maximum = grown\n",
        "total += tl.sum(tl.exp(x), axis=0)\n        maximum = tl.zeros((), ACC)\n",
        caught_by="test_matches_reference",
        function="_forward_kernel",
    ),
    Bug(
        "triton-loop-skips-tail",  # the loop runs over whole blocks only
        "softmax",
        "triton",
        "for offset in range(0, n, BLOCK):\n        inside = offset + lanes < n\n"
        "        x = tl.load(x_ptr + start + offset + lanes, mask=inside)",
        "for offset in range(0, n - BLOCK + 1, BLOCK):\n        inside = offset + lanes < n\n"
        "        x = tl.load(x_ptr + start + offset + lanes, mask=inside)",
        caught_by="test_matches_reference",
        function="_forward_kernel",
    ),
    Bug(
        "triton-backward-ignores-upstream-gradient",  # the derivative of sum(y), not of sum(g * y)
        "softmax",
        "triton",
        "dx = y * (g - dot)",
        "dx = y * (1.0 - dot)",
        caught_by="test_gradient_matches_reference",
        function="_backward_kernel",
    ),
]
# A wrapper that copies only where the axis moved (a view otherwise): the kernels index
# row * n + lane, and a model's x.T along its last axis reaches them strided.
TRITON_WRAPPER_BUGS = [
    Bug(
        "triton-wrapper-without-contiguous",
        "softmax",
        "pytorch",
        "rows = softmax_rows(last.reshape(-1, last.shape[-1]).contiguous())",
        "rows = last.reshape(-1, last.shape[-1])\n"
        "    rows = softmax_rows(rows if axis % x.ndim == x.ndim - 1 else rows.contiguous())",
        caught_by="test_matches_reference",
        says="the operands laid out as",
        function="_softmax_triton",
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
# Each bug once in the default `nox`'s quick pass (13 rounds); those of both combinations again in
# the single layout in `nox -s proofs` (6 rounds: the same text in another file).
BOTH = TORCH_BUGS + SCAFFOLDED_BUGS + ARRAY_API_BUGS
SHARES = {
    (SINGLE, "quick"): TRITON_BUGS + TRITON_WRAPPER_BUGS,
    (SPLIT_JAX, "quick"): BOTH + JAX_BUGS + SCAFFOLDED_JAX_BUGS,
    (SINGLE, "more"): BOTH,
}
ALGORITHMS = ["softmax", "cross_entropy", *COMMANDS]


ROUNDS = {key: rounds(bugs) for key, bugs in SHARES.items()}
CASES = [
    pytest.param(combination, bug, share, id=f"{combination.id}-{bug.name}", marks=SHARE_MARKS[share])
    for (combination, share), bugs in SHARES.items()
    for bug in bugs
]


RunRound = Callable[[Combination, tuple[Bug, ...]], Round]  # the `run_rounds` fixture


@pytest.fixture(scope="module")
def run_rounds(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> RunRound:
    """run_rounds(combination, bugs) -> the Round, run once per module; no bugs: every algorithm."""
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
            done[combination, bugs] = run_round(
                repo, [bug.algorithm for bug in bugs] or ALGORITHMS, work, planted=bool(bugs)
            )
        return done[combination, bugs]

    return run


@pytest.mark.slow
@pytest.mark.parametrize(("combination", "bug", "share"), CASES)
def test_generated_suite_catches(run_rounds: RunRound, combination: Combination, bug: Bug, share: str) -> None:
    (bugs,) = [round_ for round_ in ROUNDS[combination, share] if bug in round_]
    run_rounds(combination, bugs).check_caught(bug)


@pytest.mark.slow
@pytest.mark.parametrize("combination", [SINGLE, SPLIT_JAX], ids=lambda combination: combination.id)
def test_generated_suite_passes_without_bugs(run_rounds: RunRound, combination: Combination) -> None:
    result = run_rounds(combination, ())
    assert result.returncode == 0, result.output
