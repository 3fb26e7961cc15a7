"""The benchmark (`python -m benchmarks.run`) works: its quick sections run with tiny repetition counts and
write a report whose numbers are plausible. (Whether the targets are met is the benchmark's job.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report, repos
from tests.render import ROOT
from tests.test_generated_repo import run_in

RUN = [sys.executable, "-m", "benchmarks.run"]


def benchmark(output: Path, *args: str) -> dict[str, Any]:
    """Run the benchmark with `args`, writing OUTPUT.md and OUTPUT.json; the JSON results."""
    command = [*RUN, "--output", str(output), "--repeat", "1", *args]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert output.with_suffix(".md").read_text(encoding="utf-8") == result.stdout.rstrip("\n") + "\n"
    results: dict[str, Any] = json.loads(output.with_suffix(".json").read_text(encoding="utf-8"))
    return results


def assert_timed(stats: dict[str, Any], runs: int = 1) -> None:
    assert stats["runs"] == runs
    assert 0 < stats["min"] <= stats["median"] <= stats["max"] < 60


def test_render_and_update(tmp_path: Path) -> None:
    results = benchmark(tmp_path / "results", "--sections", "render,update")
    assert_timed(results["render"]["cookiecutter"])
    assert_timed(results["render"]["copier"])
    assert_timed(results["update"]["seconds"])
    assert results["targets"] == []  # no speed target is about rendering or updating
    markdown = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "| `copier update` v1.0.0 -> v2.0.0 (single) |" in markdown
    assert results["command"].startswith("python -m benchmarks.run --output")


def test_dispatch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    # split-jax: the implementations live in their own modules, JAX's imported on its first call.
    options = ["--calls", "2000", "--rounds", "21", "--processes", "2", "--combinations", "split-jax"]
    results = benchmark(tmp_path / "results", "--sections", "dispatch", *options)
    reports = results["dispatch"]["split-jax"]
    assert set(reports) == {"softmax", "cross_entropy", "log_softmax"}
    for function, by_backend in reports.items():
        assert set(by_backend) == {"numpy", "torch", "jax"}, function
        for entry in by_backend.values():
            stubbed, real = entry["dispatch"], entry["real"]
            assert 0 < stubbed["direct_ns"] < 10_000
            # A few us at most (JAX's is the slowest), with room for a loaded machine: the targets are
            # the benchmark's to judge, not this test's.
            assert -1_000 < stubbed["difference_ns"] < 50_000
            assert real["direct_ns"] > stubbed["direct_ns"]  # a real softmax costs more than a stub
            assert entry["processes"] == 2
    names = [target["name"] for target in results["targets"]]
    assert names == [
        "dispatch overhead, one operand (`softmax`, worst case)",
        "dispatch overhead, two operands (`cross_entropy`, worst case)",
    ]


@pytest.mark.slow
@pytest.mark.proof  # `nox -s proofs`: a minute of `nox -s bench`; the default times `parity bench` (test_bench.py)
def test_template_benchmark_records_the_session_wall_time(tmp_path: Path) -> None:
    output = tmp_path / "results"
    command = [sys.executable, "-m", "benchmarks.run", "--output", str(output)]
    options = ["--sections", "bench", "--combinations", "single", "--bench-repeat", "0"]
    run_in(ROOT, *command, *options)
    results = json.loads(output.with_suffix(".json").read_text(encoding="utf-8"))
    run = results["bench"]["single"]
    assert run["functions"] == ["cross_entropy", "log_softmax", "softmax"]
    assert run["rows"] == (3 + 4 + 3) * 4  # NumPy, PyTorch eager and compiled (+ numpy_shared) x sizes
    assert 0 < run["timing_seconds"] < run["cold_seconds"]
    assert run["warm_seconds"] is None
    (target,) = results["targets"]
    assert target["name"].startswith("`nox -s bench`, quick profile")
    assert target["measured"] == run["cold_seconds"]
    report = output.with_suffix(".md").read_text(encoding="utf-8")
    assert "| single | cross_entropy, log_softmax, softmax | 40 |" in report
    assert f"Target: {target['name']}: {target['verdict']}." in report


def test_a_suite_with_triton_is_held_to_its_own_limit() -> None:
    # Triton's interpreter runs the kernels on a CPU: 20 s for those suites, 10 s for the others.
    def suite(later: float, first: float) -> dict[str, Any]:
        return {"seconds": {"median": later}, "first_seconds": first, "passed": True}

    results = {"suite": {"single": suite(7.0, 8.0), "split-jax": suite(9.0, 9.5), "split-triton": suite(12.0, 13.0)}}
    found = {(target.name, target.where, target.limit, target.met) for target in report.targets(results)}
    assert found == {
        ("generated suite, installed, later runs (slowest combination)", "split-jax", 10.0, True),
        ("generated suite, installed, first run, pytest's cache empty (slowest combination)", "split-jax", 10.0, True),
        ("generated suite with Triton, installed, later runs (slowest combination)", "split-triton", 20.0, True),
        (
            "generated suite with Triton, installed, first run, pytest's cache empty (slowest combination)",
            "split-triton",
            20.0,
            True,
        ),
    }


def test_unknown_section_is_refused() -> None:
    result = subprocess.run([*RUN, "--sections", "render,speed"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "['speed'] not among render, update, cold-start" in result.stderr


@pytest.mark.parametrize(
    ("limit", "measured", "unit", "verdict"),
    [
        (150.0, 96.4, "ns", "met (54 ns to spare)"),
        (150.0, 180.0, "ns", "**missed** by 30 ns, 20%"),
        (0, 0, "", "met"),
        (0, 2, "", "**missed** by 2"),
        (90.0, 101.25, "s", "**missed** by 11.2 s, 12%"),
    ],
    ids=["dispatch-met", "dispatch-missed", "count-met", "count-missed", "seconds-missed"],
)
def test_verdicts(limit: float, measured: float, unit: str, verdict: str) -> None:
    assert report.Target("a target", limit, unit, measured, "").verdict() == verdict


def test_a_red_suite_misses_its_target_however_fast() -> None:
    target = report.Target("a suite", 10.0, "s", 1.0, "single", failed="tests failed (single)")
    assert not target.met
    assert target.verdict() == "**missed**: tests failed (single)"


def test_pytest_outcome_reads_the_summary_and_the_slowest_tests() -> None:
    stdout = (
        "..F.\n"
        "============================= slowest 5 durations ==============================\n"
        "2.78s call     tests/test_package.py::test_import[jax-float64-cpu]\n"
        "0.51s setup    tests/test_softmax.py::test_x\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_softmax.py::test_y - AssertionError\n"
        "1 failed, 3 passed, 2 skipped in 4.10s\n"
    )
    outcome = repos.pytest_outcome(1, stdout)
    assert outcome == {
        "returncode": 1,
        "passed": False,
        "summary": "1 failed, 3 passed, 2 skipped in 4.10s",
        "slowest": [
            "2.78s call     tests/test_package.py::test_import[jax-float64-cpu]",
            "0.51s setup    tests/test_softmax.py::test_x",
        ],
    }
