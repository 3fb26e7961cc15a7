"""The harness's rules for ill-conditioned problems, exact cancellations, kinks that meet, poles and
tests that compare nothing (`help(parity)` states them), on algorithms of the kinds that raised
false alarms: tests/harness_cases.py and its neighbours (harness_cases_gradients.py,
harness_cases_special.py, harness_cases_domains.py), written into a generated repo and run there
with ``pytest -v``.
Correct code passes and says how many calls it compared; planted bugs fail with a comparison; a
test that compared nothing fails and says why; a dtype that cannot hold the problem skips with
that reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.render import Combination, Render

#: Each file of cases, by the name it gets in the generated repo.
CASES = {
    "test_harness_cases.py": Path(__file__).with_name("harness_cases.py"),
    "test_harness_gradient_cases.py": Path(__file__).with_name("harness_cases_gradients.py"),
    "test_harness_special_cases.py": Path(__file__).with_name("harness_cases_special.py"),
    "test_harness_domain_cases.py": Path(__file__).with_name("harness_cases_domains.py"),
}
#: Nothing cached between runs: the repo is a fresh copy, without an example database.
OPTIONS = ["-p", "no:cacheprovider"]


@dataclass(frozen=True)
class Outcome:
    """One test of the cases on the CPU: passed, failed or skipped, with its message."""

    outcome: str
    message: str
    compared: int | None  # the test's ``compared`` property, where it has one


@dataclass(frozen=True)
class Run:
    outcomes: dict[str, Outcome]  # by test name, the CPU targets only
    output: str


@pytest.fixture(scope="module")
def run(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> Run:
    work = tmp_path_factory.mktemp("harness-rules")
    repo = Path(shutil.copytree(rendered("cookiecutter", Combination("single", jax=True)), work / "repo"))
    for name, cases in CASES.items():
        shutil.copy(cases, repo / "tests" / name)
    env = {key: value for key, value in os.environ.items() if key not in {"REQUIRE_DEVICE", "CI"}}
    junit = work / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *(f"tests/{name}" for name in CASES), "-v", *OPTIONS, f"--junitxml={junit}"],
        cwd=repo,
        env=env | {"PYTHONPATH": str(repo / "src"), "HYPOTHESIS_PROFILE": "fast"},
        capture_output=True,
        text=True,
        check=False,
    )
    outcomes = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        name = case.get("name", "")
        if "-cuda]" in name or "-mps]" in name:
            continue
        found = [child for child in case if child.tag in {"failure", "error", "skipped"}]
        outcome = found[0].tag if found else "passed"
        message = f"{found[0].get('message', '')}\n{found[0].text or ''}" if found else ""
        compared = [int(p.get("value", "")) for p in case.iter("property") if p.get("name") == "compared"]
        outcomes[name] = Outcome(outcome, message, compared[0] if compared else None)
    return Run(outcomes, result.stdout + result.stderr)


def _named(run: Run, prefix: str) -> dict[str, Outcome]:
    found = {name: outcome for name, outcome in run.outcomes.items() if name.startswith(prefix)}
    assert found, f"no test {prefix}* ran:\n{run.output[-3000:]}"
    return found


def test_correct_code_passes_and_says_how_many_calls_it_compared(run: Run) -> None:
    for name, outcome in _named(run, "test_correct_").items():
        assert outcome.outcome == "passed", f"{name}: {outcome.message}"
        if "[" in name:  # a test over targets, which calls the harness
            assert outcome.compared, f"{name} compared nothing"
            assert f"{name} PASSED ({outcome.compared} compared" in run.output


def test_a_problem_beyond_the_dtype_is_excused_and_the_message_says_why(run: Run) -> None:
    # A matrix whose condition number float32 cannot hold: PyTorch's Cholesky raises or lands
    # anywhere, JAX's answers NaN, and their solves too: each such call is excused, the rest
    # compared (4 well-conditioned log-determinants; 2 of the 4 ridge problems).
    for name, compared in [("logdet_of_nearly_singular_matrices", 4), ("ridge_of_ill_conditioned_problems", 2)]:
        for outcome in _named(run, f"test_correct_{name}[").values():
            assert outcome.outcome == "passed", outcome.message
        for backend in ["torch", "jax"]:
            assert _named(run, f"test_correct_{name}[{backend}-float32").popitem()[1].compared == compared
    reasons = {
        "cholesky_in_float16": "a matrix that it inverts has condition number",
        "logdet_gradient_of_a_tiny_row": "its inverse is beyond float64's largest value",
    }
    assert {name.split("[")[0] for name in _named(run, "test_excused_")} == {f"test_excused_{c}" for c in reasons}
    for case, reason in reasons.items():
        for name, outcome in _named(run, f"test_excused_{case}[").items():
            assert outcome.outcome == "skipped", f"{name}: {outcome.message}"
            assert "SPEC.cannot_hold[" in outcome.message, outcome.message
            assert reason in outcome.message, outcome.message
    # Not declared for float32: a test that compared nothing there fails, and says what to declare.
    for name, outcome in _named(run, "test_unheld_ridge_singular_in_float32[").items():
        assert outcome.outcome == "failure", f"{name}: {outcome.outcome}"
        assert "a matrix that it inverts has condition number" in outcome.message, outcome.message
        assert "cannot_hold={'float32': " in outcome.message, outcome.message


def test_a_float64_disagreement_as_small_as_a_librarys_names_the_tolerance_that_accepts_it(run: Run) -> None:
    (outcome,) = _named(run, "test_bug_sine_as_exact_as_a_library").values()
    assert outcome.outcome == "failure"
    assert "TOLERANCES: dict[str, Tolerance] = {'float64': Tolerance(rtol=4e-09, atol=1e-12)}" in outcome.message


def test_a_float32_error_in_a_float64_test_is_named_a_downcast_and_no_tolerance_is_proposed(run: Run) -> None:
    (outcome,) = _named(run, "test_bug_swish_with_its_sigmoid_in_float32").values()
    assert outcome.outcome == "failure"
    assert "about float32's (eps 1.2e-07) rounding in a float64 test" in outcome.message, outcome.message
    assert "Find the downcast" in outcome.message, outcome.message
    assert "Tolerance(" not in outcome.message, outcome.message
    assert "TOLERANCES" not in outcome.message, outcome.message


def test_a_period_below_xs_spacing_passes_unmeasured_with_the_reason(run: Run) -> None:
    name = "test_correct_fmod_and_remainder_gradients_with_a_period_below_xs_spacing[torch-float64-cpu]"
    assert run.outcomes[name].outcome == "passed", run.outcomes[name].message
    # 1 against 2**-126 is exactly 0 at every float near 1: only the new rule passes it.
    aliased = "features finer than x's spacing (a narrow period): every finite-difference step aliases them"
    assert f"{name} PASSED (2 compared; " in run.output, run.output[-3000:]
    assert f"2 elements unmeasured: {aliased} (x))" in run.output, run.output[-3000:]


def test_an_element_no_step_can_measure_passes_and_is_counted_with_the_reason(run: Run) -> None:
    name = "test_correct_tangent_gradient_beside_a_pole_inside_every_step[torch-float64-cpu]"
    assert run.outcomes[name].outcome == "passed", run.outcomes[name].message
    unmeasured = "1 element unmeasured: a pole, a jump or a period inside every finite-difference step (x)"
    assert f"{name} PASSED (1 compared; {unmeasured})" in run.output, run.output[-3000:]


def test_a_nan_gradient_on_the_end_of_the_domain_passes_and_is_counted_with_the_reason(run: Run) -> None:
    name = "test_correct_nan_gradient_on_the_end_of_the_domain[torch-float64-cpu]"
    assert run.outcomes[name].outcome == "passed", run.outcomes[name].message
    unmeasured = "1 element unmeasured: the end of the reference's domain, where only one side has a slope (x)"
    assert f"{name} PASSED (1 compared; {unmeasured})" in run.output, run.output[-3000:]


def test_an_operation_without_a_meta_kernel_skips_and_says_where_the_device_is_checked(run: Run) -> None:
    for name, outcome in _named(run, "test_skipped_").items():
        assert outcome.outcome == "skipped", f"{name}: {outcome.message}"
        assert "no meta kernel (aten::bincount" in outcome.message, outcome.message
        assert "its GPU targets check the device" in outcome.message


def test_planted_bugs_still_fail_with_a_comparison(run: Run) -> None:
    for name, outcome in _named(run, "test_bug_").items():
        assert outcome.outcome == "failure", f"{name} passed: the bug was not caught"
        compared = ("differs from", "is missing", "where finite differences of the reference are finite")
        assert any(words in outcome.message for words in compared), outcome.message


def test_a_nan_gradient_beside_a_pole_fails_though_the_default_step_crosses_it(run: Run) -> None:
    (outcome,) = _named(run, "test_bug_log1mexp_gradient_nan_beside_its_pole").values()
    assert outcome.outcome == "failure"
    assert "is nan at index (0,)" in outcome.message, outcome.message
    assert "torch.where and jnp.where send 0 * inf = nan back" in outcome.message, outcome.message


def test_a_test_that_compared_nothing_fails_and_says_why(run: Run) -> None:
    for name, outcome in _named(run, "test_vacuous_").items():
        assert outcome.outcome == "failure", f"{name}: {outcome.outcome}"
        assert "this test compared nothing: the NumPy reference refused every input" in outcome.message


def test_a_module_that_fails_to_import_is_an_error_not_a_crash(rendered: Render, tmp_path: Path) -> None:
    # The plugin's `PASSED (N compared)` report reads the properties of test reports only: a
    # collection report, which has none, is pytest's to show.
    repo = Path(shutil.copytree(rendered("cookiecutter", Combination("single", jax=False)), tmp_path / "repo"))
    (repo / "tests" / "test_broken.py").write_text("import a_module_that_is_not_installed\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_broken.py", "-v", *OPTIONS],
        cwd=repo,
        env=os.environ | {"PYTHONPATH": str(repo / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    output = result.stdout + result.stderr
    assert "INTERNALERROR" not in output
    assert result.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "ERROR tests/test_broken.py" in output
    assert "No module named 'a_module_that_is_not_installed'" in output


def test_draws_honour_open_ends_and_holes_in_every_dtype(run: Run) -> None:
    # Each case asserts that no draw, as its target's dtype rounds it, lies on an excluded end or
    # in a hole; here, that they ran, in every dtype, and compared.
    for case in ["reciprocal_away_from_zero", "log_on_an_open_interval", "log_at_the_ends_of_an_open_interval"]:
        found = _named(run, f"test_correct_{case}[")
        assert {name.split("-")[1] for name in found} == {"float64", "float32", "float16", "bfloat16"}, found
        for name, outcome in found.items():
            assert outcome.outcome == "passed", f"{name}: {outcome.message}"
            assert outcome.compared, f"{name} compared nothing"
