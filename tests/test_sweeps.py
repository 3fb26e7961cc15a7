"""Sweeps of the generated repo: `scripts/sweep.py` runs a sweep file here, one run after another,
and as a Slurm job array on the two-node test cluster; `scripts/results.py` turns one sweep's runs
into a table with a row per setting (Markdown, CSV, a LaTeX table that compiles) and figures,
naming the runs that failed or never started, and never pooling runs of another sweep, another
world size or another code version.

The first runs run in the single layout here and in the split-JAX layout on the cluster: a one-task
job takes the same steps as one process, bit for bit, so the two must agree exactly.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.render import Render, run
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, TORCHRUN, copy_of, environment, record

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
    command = [sys.executable, "scripts/sweep.py", *arguments]
    return subprocess.run(command, cwd=repo, env={**environment(repo), **env}, capture_output=True, text=True)


def results(repo: Path, *arguments: str) -> tuple[Path, list[dict[str, str]]]:
    """`scripts/results.py ARGUMENTS`: the folder of its (only) table and the table's CSV rows."""
    shutil.rmtree(repo / "results", ignore_errors=True)
    run([sys.executable, "scripts/results.py", *arguments], cwd=repo, env=environment(repo))
    (folder,) = (repo / "results").iterdir()
    for name in ("table.md", "table.tex", "curves.png", "curves.pdf", "final.png", "final.pdf"):
        assert (folder / name).stat().st_size > 0, name
    with (folder / "table.csv").open(encoding="utf-8") as table:
        return folder, list(csv.DictReader(table))


def listing_of(repo: Path) -> tuple[Path, list[dict[str, Any]]]:
    (listing,) = (repo / "runs/sweeps").glob("*.json")
    runs: list[dict[str, Any]] = json.loads(listing.read_text(encoding="utf-8"))["runs"]
    return listing, runs


def check_row(row: dict[str, str], records: list[dict[str, Any]], listed: int, not_finished: str) -> None:
    """A row of the table against the runs it stands for."""
    assert (int(row["n"]), int(row["listed"])) == (len(records), listed)
    for metric in ("loss", "held_out_loss", "held_out_accuracy"):
        finals = [entry["final"][metric] for entry in records]
        assert float(row[f"{metric}_mean"]) == pytest.approx(statistics.fmean(finals), rel=1e-12)
        assert float(row[f"{metric}_std"]) == pytest.approx(statistics.stdev(finals), rel=1e-12)
    assert row["seeds"] == " ".join(str(entry["arguments"]["seed"]) for entry in records)
    assert row["not_finished"] == not_finished


def assert_compiles(table: Path) -> None:
    """The LaTeX table, `\\input` into a document, goes through pdflatex (where it is installed)."""
    pdflatex = shutil.which("pdflatex")
    kpsewhich = shutil.which("kpsewhich")
    booktabs = kpsewhich and subprocess.run([kpsewhich, "booktabs.sty"], capture_output=True).returncode == 0
    if pdflatex is None or not booktabs:
        pytest.skip("Requires: pdflatex and booktabs (Debian's texlive-latex-base, texlive-latex-recommended)")
    document = table.with_name("paper.tex")
    preamble = "\\documentclass{article}\\usepackage{booktabs}\\begin{document}"
    document.write_text(f"{preamble}\\input{{{table.name}}}\\end{{document}}\n", encoding="utf-8")
    command = [pdflatex, "-interaction=nonstopmode", "-halt-on-error", document.name]
    done = subprocess.run(command, cwd=table.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]


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
def test_readme_order_gives_rows_of_one_setting_of_one_sweep(rendered: Render, tmp_path: Path) -> None:
    """The issue's scenario, with the README's commands: one run, a torchrun run, then the example
    sweep: its table pools neither of the first two runs, each row holds three seeds of one
    setting, and the LaTeX table compiles. Then a run of the sweep made with uncommitted code and
    a repeated seed: the table says so."""
    repo = copy_of(rendered, LAYOUTS[0], tmp_path / "repo")
    run(["git", "init", "-q"], cwd=repo)
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "-c", "user.name=T", "-c", "user.email=t@e.org", "commit", "-qm", "first"], cwd=repo)
    commit = run(["git", "rev-parse", "HEAD"], cwd=repo).stdout.strip()
    env = environment(repo)
    run([sys.executable, "examples/train.py", "--output", "runs/first"], cwd=repo, env=env)
    run([*TORCHRUN, "--nproc_per_node=2", "examples/train.py", "--output", "runs/two"], cwd=repo, env=env)
    run([sys.executable, "scripts/sweep.py", "run", "sweeps/example.txt"], cwd=repo, env=env)
    folder, rows = results(repo)  # the latest sweep, by default
    assert [(row["lr"], row["n"], row["listed"], row["seeds"]) for row in rows] == [
        ("0.1", "3", "3", "0 1 2"),
        ("0.5", "3", "3", "0 1 2"),
    ]
    listing, runs = listing_of(repo)
    for row, members in zip(rows, (runs[:3], runs[3:]), strict=True):
        check_row(row, [record(repo / member["output"]) for member in members], 3, "")
    table = (folder / "table.md").read_text(encoding="utf-8")
    assert f"world_size=1, code={commit[:10]}." in table
    assert "WARNING" not in table
    assert_compiles(folder / "table.tex")

    # A rerun of one run from a changed tree, into the sweep's list: its own row, flagged.
    (repo / "examples/train.py").write_text(
        (repo / "examples/train.py").read_text(encoding="utf-8") + "# changed\n", encoding="utf-8"
    )
    again = json.loads(listing.read_text(encoding="utf-8"))
    rerun = {**runs[0], "index": 6, "output": "runs/rerun"}
    arguments = [*rerun["argv"], "--output", "runs/rerun"]
    run([sys.executable, "examples/train.py", *arguments], cwd=repo, env=env)
    listing.write_text(json.dumps({**again, "runs": [*runs, rerun, {**rerun, "index": 7}]}), encoding="utf-8")
    _, rows = results(repo)
    dirty = [row for row in rows if "+dirty:" in row["code"]]
    assert [(row["lr"], row["n"], row["seeds"]) for row in dirty] == [("0.1", "2", "0 0 (repeated: 0)")]
    table = (repo / "results" / again["id"] / "table.md").read_text(encoding="utf-8")
    assert "WARNING: runs with uncommitted changes" in table
    assert "WARNING: 2 versions of the code" in table
    assert "WARNING: a seed repeats in a row" in table


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
