"""The parity report: a run asked for it (``--parity-report``, or ``PARITY_REPORT``) writes one
JSON file whose rows agree with the run (a port planted 3 times its allowance off in float32 is
found 3 times off), and the end of every run says, per algorithm and backend, how many calls
compared and the worst error as a fraction of the allowance; a run not asked writes nothing. A
call that the tolerance alone holds measures no rounding room: the reference runs once, and the
error reads against the tolerance."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ports_written import DOUBLE, PLANTED

from parity import TOLERANCES

SCALE = """
import numpy as np
import torch
from hypothesis import given, strategies as st

import parity


def scale(x):
    if isinstance(x, np.ndarray):
        return 2.0 * x
    return torch.mul(x, 2.0)


@parity.over(["torch"], ["float64", "float32"], devices=["cpu"])
@given(data=st.data())
def test_scale(target, data):
    (x,) = data.draw(parity.operands(target, parity.Spec(shapes={"x": "..."})))
    parity.assert_matches_reference(scale, target, (x,))
"""

# A port half float64's rtol off (5e-11 relative): the tolerance holds every element.
NEAR = """
import numpy as np
import torch

import parity

RUNS = []


def near(x):
    if isinstance(x, np.ndarray):
        RUNS.append(x.shape)
        return 2.0 * x
    return torch.mul(x, 2.0 * (1 + 5e-11))


@parity.over(["torch"], ["float64"], devices=["cpu"])
def test_near(target):
    parity.assert_matches_reference(near, target, (np.linspace(-4.0, 4.0, 50),))
    assert RUNS == [(50,)]  # the reference's own run: no rounding room measured
"""


@pytest.fixture
def run(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makepyfile(test_scale=SCALE, test_planted=PLANTED)
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--parity-report", "reports/parity.json"
    )


def test_the_report_finds_the_planted_port_3_times_off(
    run: pytest.RunResult, pytester: pytest.Pytester
) -> None:
    run.assert_outcomes(passed=2, failed=1, skipped=1)
    report = json.loads((pytester.path / "reports" / "parity.json").read_text(encoding="utf-8"))
    rows = {(r["algorithm"], r["dtype"], r["device"]): r for r in report["rows"]}
    planted = rows["planted", "float32", "cpu"]
    assert planted["failed"] == 1
    assert planted["elements"] == 50
    assert 2.9 < planted["worst_fraction"] < 3.1, planted
    # In units in the last place: where rtol * |expected| >= atol (|expected| >= 0.1), each error
    # over float32's spacing there; nearer zero the fraction above reads better.
    expected = np.linspace(-4.0, 4.0, 50)
    off = expected + 3 * (1e-6 + 1e-5 * np.abs(expected))
    relative = np.abs(expected) >= 0.1
    error = np.abs(off.astype(np.float32) - expected)[relative]
    ulps = error / np.spacing(np.abs(expected[relative]).astype(np.float32))
    assert planted["worst_ulps"] == pytest.approx(ulps.max(), rel=1e-3), planted
    cuda = rows["planted", "float32", "cuda"]
    if cuda["skipped"]:
        assert list(cuda["skipped"]) == ["Requires: CUDA device (none found)"]
    assert set(report["versions"]) >= {"python", "numpy", "torch"}
    assert report["date"]
    assert "commit" in report
    assert "seed" in report
    # The run's own line for it, beside the device skips.
    run.stdout.fnmatch_lines(["parity: planted torch: * worst error 3.0? of the allowance *"])


@pytest.mark.usefixtures("run")
def test_the_passing_ports_stay_within_their_allowance(pytester: pytest.Pytester) -> None:
    report = json.loads((pytester.path / "reports" / "parity.json").read_text(encoding="utf-8"))
    rows = [r for r in report["rows"] if r["algorithm"] == "scale"]
    assert all(row["passed"] for row in rows)
    assert {r["dtype"] for r in rows} == {"float64", "float32"}
    for row in rows:
        assert row["calls_compared"] > 0
        assert row["elements"] > 0
        assert 0.0 <= row["worst_fraction"] <= 1.0, row
        assert row["worst_ulps"] == 0.0, row  # doubling is exact in every float dtype


def test_no_report_unless_asked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_scale=SCALE)
    pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert not list(pytester.path.rglob("*.json"))


def test_with_xdist_the_controller_writes_every_worker_s_rows(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_scale=SCALE, test_planted=PLANTED)
    report = pytester.path / "parity.json"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", f"--parity-report={report}")
    rows = json.loads(report.read_text(encoding="utf-8"))["rows"]
    assert sum(row["passed"] + row["failed"] + sum(row["skipped"].values()) for row in rows) == 4


def test_the_report_and_the_closing_line_name_a_capability_the_port_lacks(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_double=DOUBLE)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--parity-report=parity.json")
    run.assert_outcomes(passed=1, skipped=1)
    (row,) = json.loads((pytester.path / "parity.json").read_text(encoding="utf-8"))["rows"]
    capabilities = row["capabilities"]
    assert capabilities["second_derivative"] == "present", capabilities
    assert capabilities["forward_mode"].startswith("absent: "), capabilities
    assert "jvp" in capabilities["forward_mode"] or "setup_context" in capabilities["forward_mode"]
    run.stdout.fnmatch_lines(["parity: double torch: *; lacks forward_mode"])


def test_a_call_the_tolerance_holds_runs_the_reference_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_near=NEAR)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--parity-report=parity.json")
    run.assert_outcomes(passed=1)
    (row,) = json.loads((pytester.path / "parity.json").read_text(encoding="utf-8"))["rows"]
    x = np.linspace(-4.0, 4.0, 50)
    tolerance = TOLERANCES["float64"]
    error = np.abs(x * (2.0 * (1 + 5e-11)) - 2.0 * x)
    assert row["worst_fraction"] == pytest.approx(
        np.max(error / (tolerance.atol + tolerance.rtol * np.abs(2.0 * x))), rel=1e-9
    )
