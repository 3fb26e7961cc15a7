"""Sweeps of the generated repo: `scripts/sweep.py` runs a sweep file here, one run after another,
and as a Slurm job array on the two-node test cluster; `scripts/results.py` turns the runs into a
table per setting and a plot, naming the runs that failed or never started.

Its first runs run in the single layout here and in the split-JAX layout on the cluster: a one-task
job takes the same steps as one process, bit for bit, so the two must agree exactly.
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.render import Render, run
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, copy_of, environment, record

# Two seeds of a learning rate here; on the cluster, two learning rates x two seeds, and a run more.
SWEEP = """\
# the test's sweep
--lr 0.1 --seed 0 --epochs 2
--lr 0.1 --seed 1 --epochs 2
"""
MORE = """\
--lr 0.5 --seed 0 --epochs 2   # a comment
--lr 0.5 --seed 1 --epochs 2
"""
FAILS = "--lr 0.5 --seed 2 --epochs 2 --batch-size 4096\n"  # train.py refuses it: more than the data
CANCELLED = "--lr 0.5 --seed 2 --epochs 2\n"  # cancelled while it waits for its turn


def sweep(repo: Path, *arguments: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "scripts/sweep.py", *arguments]
    return subprocess.run(command, cwd=repo, env={**environment(repo), **env}, capture_output=True, text=True)


def results(repo: Path, listing: Path) -> list[dict[str, str]]:
    """`scripts/results.py --sweep LISTING`: the rows of its CSV table (files checked to exist)."""
    run([sys.executable, "scripts/results.py", "--sweep", listing], cwd=repo, env=environment(repo))
    for name in ("results.md", "results.png", "results.pdf"):
        assert (repo / "results" / name).stat().st_size > 0, name
    with (repo / "results/results.csv").open(encoding="utf-8") as table:
        return list(csv.DictReader(table))


def listing_of(repo: Path) -> tuple[Path, list[dict[str, Any]]]:
    (listing,) = (repo / "runs/sweeps").glob("*.json")
    runs: list[dict[str, Any]] = json.loads(listing.read_text(encoding="utf-8"))["runs"]
    return listing, runs


def check_row(row: dict[str, str], records: list[dict[str, Any]], listed: int, not_finished: str) -> None:
    """A row of the table against the runs it stands for."""
    losses = [entry["final_loss"] for entry in records]
    accuracies = [entry["final_accuracy"] for entry in records]
    assert (int(row["runs_finished"]), int(row["runs"])) == (len(records), listed)
    assert float(row["final_loss_mean"]) == pytest.approx(statistics.fmean(losses), rel=1e-12)
    assert float(row["final_loss_std"]) == pytest.approx(statistics.stdev(losses), rel=1e-12)
    assert float(row["final_accuracy_mean"]) == pytest.approx(statistics.fmean(accuracies), rel=1e-12)
    assert row["seeds"] == " ".join(str(entry["seed"]) for entry in records)
    assert row["not_finished"] == not_finished


@pytest.fixture(scope="module")
def here(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs and one that fails, run here in the single layout: the repo."""
    repo = copy_of(rendered, LAYOUTS[0], tmp_path_factory.mktemp("here") / "repo")
    (repo / "sweeps/test.txt").write_text(SWEEP + FAILS, encoding="utf-8")
    start = time.perf_counter()
    done = sweep(repo, "run", "sweeps/test.txt")
    print(f"3 runs here, one after another: {time.perf_counter() - start:.1f} s")
    _, runs = listing_of(repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().endswith(f"failed: {runs[2]['output']}"), done.stderr
    assert "2 of 3 runs done" in done.stdout
    return repo


@pytest.mark.slow
def test_sweep_here_gives_a_row_per_setting_and_names_the_failed_run(here: Path) -> None:
    listing, runs = listing_of(here)
    records = [record(here / run["output"]) for run in runs[:2]]
    rows = results(here, listing)
    # Only the arguments that vary are columns: batch_size, lr (the failed run's), not the others.
    assert [(row["batch_size"], row["lr"]) for row in rows] == [("128", "0.1"), ("4096", "0.5")]
    check_row(rows[0], records, 2, "")
    assert (rows[1]["runs_finished"], rows[1]["runs"], rows[1]["seeds"]) == ("0", "1", "")
    assert rows[1]["not_finished"] == f"{runs[2]['output']} (started, not finished)"
    table = (here / "results/results.md").read_text(encoding="utf-8")
    assert "Settings shared by every row: deterministic=False, device=cpu, epochs=2, samples=2048." in table
    assert f"| 128 | 0.1 | 2 of 2 | {statistics.fmean(entry['final_loss'] for entry in records):.4f} ± " in table


@pytest.mark.slow
def test_sweep_as_a_job_array_matches_the_sweep_run_here(
    slurm: Cluster, rendered: Render, here: Path, tmp_path: Path
) -> None:
    repo = copy_of(rendered, LAYOUTS[1], tmp_path / "repo")
    (repo / "sweeps/test.txt").write_text(SWEEP + MORE + CANCELLED, encoding="utf-8")
    start = time.perf_counter()
    submitted = sweep(repo, "submit", "sweeps/test.txt", "--max-parallel", "2", **slurm.env)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    array = re.search(r"as job array (\d+)", submitted.stdout)
    assert array is not None, submitted.stdout
    slurm.run("scancel", f"{array[1]}_4")  # pending: at most 2 run at a time
    slurm.wait(array[1])
    seconds = time.perf_counter() - start

    listing, runs = listing_of(repo)
    ran_here = listing_of(here)[1]
    assert [run["output"] for run in runs] == [f"runs/{array[1]}_{task}" for task in range(5)]
    for task in range(4):
        log = (repo / f"slurm-{array[1]}_{task}.out").read_text(encoding="utf-8")
        assert slurm.job(f"{array[1]}_{task}")["JobState"] == "COMPLETED", log
    for task in range(2):  # the runs made here too
        on_cluster, on_laptop = record(repo / runs[task]["output"]), record(here / ran_here[task]["output"])
        assert on_cluster["arguments"] == {**on_laptop["arguments"], "output": runs[task]["output"]}
        assert on_cluster["losses"] == on_laptop["losses"]
        assert on_cluster["parameters_sha256"] == on_laptop["parameters_sha256"]
    assert not (repo / runs[4]["output"]).exists()  # cancelled before it started
    assert not (repo / f"slurm-{array[1]}_4.out").exists()

    rows = results(repo, listing)
    records = [record(repo / run["output"]) for run in runs[:4]]
    assert [row["lr"] for row in rows] == ["0.1", "0.5"]
    check_row(rows[0], records[:2], 2, "")
    check_row(rows[1], records[2:], 3, f"runs/{array[1]}_4 (never started)")
    print(f"a 5-run array (one cancelled), at most 2 at a time: sbatch to done {seconds:.1f} s")
