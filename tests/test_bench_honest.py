"""The benchmark on a shared machine: what a number was measured with, and when not to trust it.

`parity bench` uses one PyTorch thread unless told otherwise, and records it with the processor,
the usable CPUs, the load average and the versions, in the table, the plot's title and results.json;
it warns where other programs' load and its own threads exceed the CPUs, and names the noisy rows
(IQR over 10% of the median) and those with too few samples for an IQR. The plot comes as PDF too.
A run can be kept as its commit's baseline, and a later run compared with it by the commit's name,
row by row: a port slowed since is named.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.render import BIN, COMBINATIONS, TOOLS, Render, commit_all, git
from tests.scaffolded import PACKAGE, implement, scaffold
from tests.test_bench import ROOFLINE, bench, refused, results_of
from tests.test_generated_repo import run_in

CHEAP = ["--only", "softmax", "--backend", "numpy", "--sizes", "1000", "--min-run-time", "0.01"]


@pytest.fixture(scope="module")
def scripts() -> dict[str, ModuleType]:
    """`parity bench`'s report and comparison modules."""
    return {name: importlib.import_module(f"parity_tools.{name}") for name in ("bench_report", "bench_compare")}


def row(median: float, q1: float, q3: float, **where: Any) -> dict[str, Any]:
    place = {"function": "f", "backend": "torch", "device": "cpu", "mode": "eager", "size": 1000}
    timed = {"median_s": median, "q1_s": q1, "q3_s": q3, "samples": 20, "first_call_s": 2 * median}
    return {**place, **where, **timed, "shapes": [[1000]], "speedup": 1.0, **ROOFLINE}


def test_a_busy_machine_is_named(scripts: dict[str, ModuleType]) -> None:
    busy = scripts["bench_report"].busy
    assert busy(load=0.3, threads=1, cpus=2) is None
    assert busy(load=1.0, threads=1, cpus=2) is None  # one CPU free for the one thread
    # 2 usable CPUs, others' load and 2 threads: each thread waits for a CPU, and a time says more
    # about the load than about the port.
    warning = busy(load=1.6, threads=2, cpus=2)
    assert warning.startswith("the machine is busy: load average 1.6 (last minute) on 2 usable CPUs")
    assert "(--threads 1 is steadier)" in warning
    alone = busy(load=5.3, threads=1, cpus=2)
    assert "shares the CPUs with other programs" in alone
    assert "--threads 1" not in alone


def test_noisy_rows_are_named(scripts: dict[str, ModuleType]) -> None:
    report = scripts["bench_report"]
    notes = {
        name: dict(zip(report.COLUMNS, report.cells(measured), strict=True))["note"]
        for name, measured in {
            "steady": row(1.0, 0.98, 1.05),  # IQR 7% of the median
            "noisy": row(1.0, 0.9, 1.25),
            # 100 times too slow, but steadily so: no IQR can tell.
            "slow and steady": row(40e-3, 39.97e-3, 40.04e-3),
        }.items()
    }
    assert notes == {"steady": "", "noisy": "noisy: IQR 35% of the median", "slow and steady": ""}


def test_a_row_with_too_few_samples_shows_no_iqr(rendered: Render) -> None:
    """Quartiles of one or two samples mean nothing: the row says so instead of "IQR 0 ns" (a
    comparison with it rests on the ratio of medians alone)."""
    report = importlib.import_module("parity_tools.bench_report")
    where = {"function": "f", "backend": "torch", "device": "cpu", "mode": "eager", "size": 10}
    one = {**where, "shapes": [[10]], "first_call_s": 2.0, "speedup": 1.0, "samples": 1, "calls_per_sample": 1}
    one |= {"median_s": 1.0, "q1_s": 1.0, "q3_s": 1.0, **ROOFLINE}
    cells = dict(zip(report.COLUMNS, report.cells(one), strict=True))
    assert (cells["IQR"], cells["note"]) == ("-", f"1 of the {report.MIN_SAMPLES} samples an IQR needs")
    many = {**one, "samples": report.MIN_SAMPLES, "q1_s": 0.9, "q3_s": 1.2}
    cells = dict(zip(report.COLUMNS, report.cells(many), strict=True))
    assert (cells["IQR"], cells["note"]) == ("300 ms", "noisy: IQR 30% of the median")


def test_a_comparison_gives_every_ratio(scripts: dict[str, ModuleType]) -> None:
    compare = scripts["bench_compare"]
    machine = {"cpu": "x", "usable_cpus": 2, "torch_threads": 1, "gpu": None, "versions": {"torch": "2.13.0"}}
    earlier = [row(1.0, 0.95, 1.05), row(1.0, 0.95, 1.05, size=10), row(1.0, 0.5, 1.5, size=20)]
    later = [row(2.0, 1.9, 2.1), row(1.05, 1.0, 1.1, size=10), row(2.0, 1.2, 2.5, size=20)]
    later.append(row(1.0, 0.9, 1.1, size=30))  # not in the earlier run
    old = {"git": {"commit": "a" * 40}, "machine": machine, "rows": earlier}
    new = {"git": {"commit": "b" * 40}, "machine": {**machine, "torch_threads": 2}, "rows": later}
    found = compare.compare(old, new, threshold=0.2)

    assert [(r["size"], r["ratio"], r["verdict"]) for r in found["rows"]] == [
        (1000, 2.0, "slower"),
        (10, 1.05, "same"),
        (20, 2.0, "same"),  # the IQRs overlap: noise could explain it
    ]
    assert found["changes"] == ["f torch cpu eager size 1,000: slower, 2.00x the time (1.00 s -> 2.00 s)"]
    assert found["settings_differ"] == {"torch_threads": [1, 2]}
    text = "\n".join(compare.lines(found))
    assert f"Against the earlier run ({'a' * 12}), new time / old time:" in text
    assert "f         torch    cpu     eager  1,000  1.00 s  2.00 s  2.00x  slower" in text
    assert "The runs differ in torch_threads: 1, then 2; the ratios show that too." in text
    # Too few samples for quartiles: the ratio alone decides, and the change says so.
    one = {**row(1.0, 1.0, 1.0), "samples": 1}
    changes = compare.compare({**old, "rows": [one]}, {**new, "rows": [{**one, "median_s": 3.0}]}, 0.2)["changes"]
    assert changes == [
        "f torch cpu eager size 1,000: slower, 3.00x the time (1.00 s -> 3.00 s; too few samples "
        "(under 5) to compare IQRs)"
    ]


@pytest.mark.slow
def test_what_a_run_was_measured_with(rendered: Render, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", COMBINATIONS[0]), tmp_path / "repo"))
    commit_all(repo, "start", init=True)
    bench(repo, *CHEAP, "--save-baseline")
    results = results_of(repo)
    machine = results["machine"]
    assert machine["torch_threads"] == 1, "one thread is the default"
    assert machine["usable_cpus"] >= 1
    assert len(machine["load_average"]) == 2
    assert all(load >= 0 for load in machine["load_average"])
    assert results["git"] == {"commit": git(repo, "rev-parse", "HEAD"), "dirty": False}
    stated = f"1 PyTorch thread of {machine['usable_cpus']} usable CPUs, load average "
    assert stated in results["plot"]["title"]
    markdown = (repo / "bench-results" / "results.md").read_text(encoding="utf-8")
    assert stated in markdown
    assert f"code {results['git']['commit'][:12]};" in markdown
    assert (repo / "bench-results" / "results.pdf").read_bytes().startswith(b"%PDF-")
    assert "[results.pdf](results.pdf)" in markdown
    baseline = repo / "bench-results" / "baselines" / f"{results['git']['commit']}.json"
    assert json.loads(baseline.read_text(encoding="utf-8"))["rows"] == results["rows"]

    # A baseline must time a commit, and --compare a commit that has one: refused before timing.
    (repo / "README.md").write_text("edited\n", encoding="utf-8")
    refused(bench(repo, *CHEAP, "--save-baseline", check=False), "tracked files have uncommitted changes")
    commit_all(repo, "edit")
    refused(bench(repo, *CHEAP, "--compare", "HEAD", check=False), "no baseline saved for commit")
    refused(bench(repo, *CHEAP, "--threads", "0", check=False), "expected a number of threads such as 1 or 4")

    # One usable CPU and two threads: busy, whatever the load.
    one_cpu = ["taskset", "--cpu-list", "0", *TOOLS, "bench"]
    pinned = run_in(repo, *one_cpu, *CHEAP, "--threads", "2", "--compare", "HEAD~1", check=False)
    assert pinned.returncode == 0, pinned.stderr
    assert "bench: warning: the machine is busy: load average " in pinned.stderr
    assert "on 1 usable CPU, with 2 PyTorch threads here" in pinned.stdout
    machine = results_of(repo)["machine"]
    assert (machine["usable_cpus"], machine["torch_threads"]) == (1, 2)
    assert "Warning: the machine is busy" in (repo / "bench-results" / "results.md").read_text(encoding="utf-8")
    assert "The runs differ in usable_cpus: " in pinned.stdout


@pytest.mark.slow
@pytest.mark.proof  # `nox -s proofs`: two bench runs and a commit; the default reads a run's conditions above
def test_compare_names_a_slowed_port(rendered: Render, tmp_path: Path) -> None:
    """A baseline saved, the port slowed in the next commit: `--compare HEAD~1` names it."""
    combination = COMBINATIONS[0]
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    scaffold(repo, "logsumexp")
    implement(repo, combination, "logsumexp")
    commit_all(repo, "logsumexp", init=True)
    options = ["--only", "logsumexp", "--backend", "torch", "--sizes", "1000,4000", "--min-run-time", "0.05"]
    assert f"baselines/{git(repo, 'rev-parse', 'HEAD')}.json" in bench(repo, *options, "--save-baseline").stdout

    # Thirty needless passes over the input in the PyTorch port: the same result, slower.
    module = repo / "src" / PACKAGE / "logsumexp.py"
    port = "m = x.amax(dim=axis, keepdim=True)"
    slowed = "for _ in range(30):\n        x = x + 0.0 * torch.tanh(x)\n    " + port
    module.write_text(module.read_text(encoding="utf-8").replace(port, slowed), encoding="utf-8")
    commit_all(repo, "slower")

    # Through the nox session, in this environment (as on a GPU node's existing one).
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    nox: list[str | Path] = [BIN / "nox", "--no-venv", "--no-install", "-s", "bench", "--"]
    result = run_in(repo, "env", f"PATH={path}", *nox, *options, "--compare", "HEAD~1")
    for size in ("1,000", "4,000"):
        line = next(line for line in result.stdout.splitlines() if f"torch cpu eager size {size}:" in line)
        assert float(line.partition(": slower, ")[2].split("x")[0] or 0) > 2, line
        rows = [line.split() for line in result.stdout.splitlines()]  # the table of ratios among them
        assert ["logsumexp", "torch", "cpu", "eager", size] in [row[:5] for row in rows if row[-1:] == ["slower"]]
    comparison = results_of(repo)["comparison"]
    assert len(comparison["rows"]) == 2 * 3  # sizes x (NumPy, PyTorch eager and compiled)
    assert comparison["against"] == git(repo, "rev-parse", "HEAD~1")
    assert any("logsumexp torch cpu eager size 1,000: slower" in change for change in comparison["changes"])
