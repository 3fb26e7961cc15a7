"""A Slurm job that reaches a real time limit finishes by itself, over several starts.

The generated `scripts/slurm/train.sbatch` is submitted with a one-minute limit and the warning
50 s before it (`--time=1 --signal=B:USR1@50`): the script passes the warning on to the training
processes, which stop at a step boundary and save, then requeues the job, which continues from the
checkpoint in a new start with a fresh minute, until the run ends where an uninterrupted run ends,
bit for bit. Slurm checks time limits every 30 s, so the warning arrives 10-40 s after a start:
the job trains for about 75 s (sized from a short run) to be sure to meet it at least once.

It takes 1-1.5 minutes, mostly waiting for Slurm: it is not part of the default suite. Run it with
`nox -s slurm_time_limit` (`.ci/run` does, after `nox`) or `pytest -m time_limit`.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import time
from pathlib import Path

import pytest

from tests.render import Render
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, TORCHRUN, copy_of, environment, record, train

pytestmark = pytest.mark.time_limit
SAMPLES = ["--samples", "8192"]  # 64 steps an epoch
TRAINING_SECONDS = 75  # more than the 40 s a start can last before its warning


def test_job_at_its_time_limit_requeues_itself_and_finishes(slurm: Cluster, rendered: Render, tmp_path: Path) -> None:
    repo = copy_of(rendered, LAYOUTS[0], tmp_path / "repo")
    train(repo, *SAMPLES, "--epochs", "3", "--output", "runs/measure", processes=2)
    epochs = math.ceil(TRAINING_SECONDS / (record(repo / "runs/measure")["seconds"] / 3))
    arguments = [*SAMPLES, "--epochs", str(epochs)]

    start = time.perf_counter()
    options = ["--time=1", "--signal=B:USR1@50", "--nodes=1", "--ntasks=2"]
    job = slurm.submit(*options, "scripts/slurm/train.sbatch", *arguments, cwd=repo, **environment(repo))
    # The uninterrupted run meanwhile, beside the job: sharing the CPUs only slows the job down.
    command = [*TORCHRUN, "--nproc_per_node=2", "examples/train.py", *arguments, "--output", "runs/whole"]
    with (tmp_path / "whole.log").open("w") as output:
        whole = subprocess.Popen(command, cwd=repo, env=environment(repo), stdout=output, stderr=output)
        slurm.wait(job, timeout=900, requeued_now=True)
        seconds = time.perf_counter() - start
        assert whole.wait(timeout=900) == 0, (tmp_path / "whole.log").read_text()

    log = (repo / f"slurm-{job}.out").read_text(encoding="utf-8")
    assert slurm.job(job)["JobState"] == "COMPLETED", log
    starts = record(repo / "runs" / job)["starts"]
    assert len(starts) >= 2, log
    for before, after in itertools.pairwise(starts):
        assert before["stopped"]["signal"] == "SIGUSR1", log
        assert after["resumed_from"] == {key: before["stopped"][key] for key in ("epoch", "batch", "step")}
        assert after["restart_count"] > before["restart_count"]
    assert starts[-1]["stopped"] is None
    assert log.count("train.sbatch: time-limit warning") >= len(starts) - 1
    assert record(repo / "runs" / job)["history"] == record(repo / "runs/whole")["history"]
    assert record(repo / "runs" / job)["parameters_sha256"] == record(repo / "runs/whole")["parameters_sha256"]
    print(f"{epochs} epochs: sbatch to done {seconds:.1f} s, {len(starts)} starts, stops at {starts[0]['stopped']}")
