"""Sweeps of the generated repo: `parity sweep` runs a sweep file here, one run after another,
and as a Slurm job array on the two-node test cluster; `parity results` turns one sweep's runs
into a table with a row per setting (Markdown, CSV, a LaTeX table that compiles) and figures,
naming the runs that failed or never started, and never pooling runs of another sweep, another
world size or another code version.

The first runs run in the single layout here and in the split-JAX layout on the cluster: a one-task
job takes the same steps as one process, bit for bit, so the two must agree exactly.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from tests.render import TOOLS, Render
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, check_row, copy_of, environment, listing_of, record, results, run_cases

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
FAILS = "--lr 0.5 --seed 2 --epochs 2 --device mps\n"  # passes the sweep's checks; no MPS here
CANCELLED = "--lr 0.5 --seed 2 --epochs 2\n"  # cancelled while it waits for its turn


def sweep(repo: Path, *arguments: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [*TOOLS, "sweep", *arguments]
    return subprocess.run(command, cwd=repo, env={**environment(repo), **env}, capture_output=True, text=True)


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
def test_sweep_refuses_what_it_cannot_run_before_running_anything(rendered: Render, tmp_path: Path) -> None:
    """tests/sweep_cases.py: each refusal names the line to change and how."""
    run_cases(copy_of(rendered, LAYOUTS[0], tmp_path / "repo"), Path(__file__).with_name("sweep_cases.py"))


@pytest.mark.slow
def test_sweep_here_gives_a_row_per_setting_and_names_the_failed_run(here: Path) -> None:
    listing, runs = listing_of(here)
    records = [record(here / run["output"]) for run in runs[:2]]
    folder, rows = results(here, "--sweep", str(listing))
    # Only the arguments that vary are columns: device, lr (the failed run's), not the others.
    assert [(row["device"], row["lr"]) for row in rows] == [("cpu", "0.1"), ("mps", "0.5")]
    check_row(rows[0], records, 2, "")
    assert (rows[1]["n"], rows[1]["listed"], rows[1]["seeds"]) == ("0", "1", "")
    assert rows[1]["not_finished"] == f"{runs[2]['output']} (started)"
    table = (folder / "table.md").read_text(encoding="utf-8")
    assert "sweeps/test.txt" in table
    assert "2 of 3 runs finished" in table
    assert "Shared by every row: batch_size=128, deterministic=False, epochs=2, samples=2048" in table
    mean = statistics.fmean(entry["final"]["loss"] for entry in records)
    assert f" 2 of 2 | {mean:.4f} ± " in re.sub(" +", " ", table), table


@pytest.mark.slow
def test_sweep_as_a_job_array_matches_the_sweep_run_here(
    slurm: Cluster, rendered: Render, here: Path, tmp_path: Path
) -> None:
    """Submitted with the command line of sweep.py's docstring: at most 2 at a time, sbatch options
    after `--`."""
    repo = copy_of(rendered, LAYOUTS[1], tmp_path / "repo")
    (repo / "sweeps/test.txt").write_text(SWEEP + MORE + CANCELLED, encoding="utf-8")
    start = time.perf_counter()
    options = ["--max-parallel", "2", "--", "--ntasks=2", "--time=30"]
    submitted = sweep(repo, "submit", "sweeps/test.txt", *options, **slurm.env)
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
        assert slurm.job(f"{array[1]}_{task}")["NumTasks"] == "2", log
    for task in range(2):  # the runs made here too, in one process
        on_cluster, on_laptop = record(repo / runs[task]["output"]), record(here / ran_here[task]["output"])
        assert on_cluster["arguments"] == {**on_laptop["arguments"], "output": runs[task]["output"]}
        assert on_cluster["made_by"]["world_size"] == 2
        for metric, values in on_laptop["history"].items():
            assert on_cluster["history"][metric] == pytest.approx(values, rel=1e-5, abs=1e-6)
    assert not (repo / runs[4]["output"]).exists()  # cancelled before it started
    assert not (repo / f"slurm-{array[1]}_4.out").exists()

    _, rows = results(repo, "--sweep", str(listing))
    records = [record(repo / run["output"]) for run in runs[:4]]
    assert [row["lr"] for row in rows] == ["0.1", "0.5"]
    assert "world_size=2" in (repo / "results" / listing.stem / "table.md").read_text(encoding="utf-8")
    check_row(rows[0], records[:2], 2, "")
    check_row(rows[1], records[2:], 3, f"runs/{array[1]}_4 (never started)")
    print(f"a 5-run array (one cancelled), at most 2 at a time: sbatch to done {seconds:.1f} s")
