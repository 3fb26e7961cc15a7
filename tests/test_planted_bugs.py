"""The generated test suite catches realistic porting bugs.

Each case plants one bug, by editing the text of an implementation in a copy of a generated repo,
and runs that algorithm's generated test file, which must fail (and, for the record, fail in the
test that is meant to catch it). Without a bug the same files pass. Bugs in the PyTorch and NumPy
code are planted in a single-layout repo and in a split-layout repo with JAX; JAX bugs in the
latter. The algorithms are the worked examples and two algorithms scaffolded with
`scripts/new_algorithm.py` then written (see scaffolded.py): a user's own algorithm is tested as
strongly as the examples.

A device mix-up (a stray `.cpu()`) cannot show as a wrong device on a machine without a GPU: the
suite runs every PyTorch function on the `meta` device too (tensors with a shape, a dtype and a
device but no data), where moving data to the CPU or mixing in a CPU tensor is an error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.render import Combination, Render
from tests.scaffolded import COMMANDS, implement, scaffold

PACKAGE = "my_research_project"  # from the default answers
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

    def plant(self, repo: Path, layout: str) -> None:
        source = repo / "src" / PACKAGE
        path = source / f"{self.algorithm}.py"
        if layout == "split":
            path = source / self.algorithm / f"{self.backend}_impl.py"
        text = path.read_text(encoding="utf-8")
        assert text.count(self.old) == 1, f"{self.old!r} is not once in {path}:\n{text}"
        path.write_text(text.replace(self.old, self.new), encoding="utf-8")


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
CASES = [
    pytest.param(combination, bug, id=f"{combination.id}-{bug.name}")
    for combination, bugs in [(SINGLE, SINGLE_BUGS), (SPLIT_JAX, SPLIT_JAX_BUGS)]
    for bug in bugs
]


def prepare(rendered: Render, tmp_path: Path, combination: Combination, algorithm: str) -> Path:
    """A copy of the combination's render, with `algorithm` scaffolded and written if it is
    not a worked example."""
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    if algorithm in COMMANDS:
        scaffold(repo, algorithm)
        implement(repo, combination, algorithm)
    return repo


def run_tests(repo: Path, algorithm: str) -> subprocess.CompletedProcess[str]:
    """The generated tests of `algorithm`, stopping at the first failure, with the CI profile
    (derandomized): which test catches a bug is then the same on every run, as in CI."""
    env = {key: value for key, value in os.environ.items() if key != "REQUIRE_DEVICE"}
    env |= {"HYPOTHESIS_PROFILE": "ci", "PYTHONPATH": str(repo / "src")}
    command = [sys.executable, "-m", "pytest", f"tests/test_{algorithm}.py", "-x", "-q", "-p", "no:cacheprovider"]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)


@pytest.mark.slow
@pytest.mark.parametrize(("combination", "bug"), CASES)
def test_generated_suite_catches(rendered: Render, tmp_path: Path, combination: Combination, bug: Bug) -> None:
    repo = prepare(rendered, tmp_path, combination, bug.algorithm)
    bug.plant(repo, combination.layout)
    result = run_tests(repo, bug.algorithm)
    output = result.stdout + result.stderr
    assert result.returncode == 1, f"the suite did not catch {bug.name}:\n{output}"
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 1, output
    assert f"::{bug.caught_by}" in failed[0], output
    assert bug.says in output, output


@pytest.mark.slow
@pytest.mark.parametrize("combination", [SINGLE, SPLIT_JAX], ids=lambda combination: combination.id)
@pytest.mark.parametrize("algorithm", ["softmax", "cross_entropy", *COMMANDS])
def test_generated_suite_passes_without_bugs(
    rendered: Render, tmp_path: Path, combination: Combination, algorithm: str
) -> None:
    repo = prepare(rendered, tmp_path, combination, algorithm)
    result = run_tests(repo, algorithm)
    assert result.returncode == 0, result.stdout + result.stderr
