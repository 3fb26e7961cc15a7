"""The generated `scripts/slurm/train.sbatch` on a real two-node Slurm cluster started here.

The cluster (tests/slurm_cluster.py: Debian's `slurm-wlm` and `munge`, root, network namespaces)
has two nodes, n1 and n2, each with its own address and host name, so a two-node job goes through
the same rendezvous as on a real cluster: `MASTER_ADDR` from the job's node list, a rank per task,
gloo across the two addresses. Every job must take the steps of a one-process run (same losses and
parameters within train.py's stated tolerance).

A job stopped mid-epoch, by `scontrol requeue` (SIGTERM, as a preemption) or by the warning Slurm
sends before a time limit (USR1 to the batch script, which requeues the job itself), must start
again by itself and end where an uninterrupted run ends, bit for bit. Slurm keeps a requeued job
pending for 2 minutes; the tests start it at once (`scontrol update StartTime=now`). A job
reaching a real time limit: tests/test_time_limit.py (its own nox session: Slurm checks time
limits every 30 s).
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, TOOLS, Combination, Render, run
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, assert_same_run, copy_of, environment, record, train

ARGUMENTS = ["--epochs", "5"]
SHAPES = {"one-node": ["--nodes=1", "--ntasks=2"], "two-nodes": ["--nodes=2", "--ntasks-per-node=1"]}
# 64 steps an epoch: a stop after the first epoch lands mid-epoch.
LONGER = ["--samples", "8192", "--epochs", "4"]


@pytest.fixture(scope="module")
def repos(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> dict[Combination, Path]:
    """A private copy of each layout's render."""
    return {layout: copy_of(rendered, layout, tmp_path_factory.mktemp(layout.id) / "repo") for layout in LAYOUTS}


@pytest.fixture(scope="module")
def uninterrupted(repos: dict[Combination, Path]) -> Path:
    """A run of LONGER in 2 torchrun processes, never stopped: its folder."""
    repo = repos[COMBINATIONS[0]]
    train(repo, *LONGER, "--output", "runs/uninterrupted", processes=2)
    return repo / "runs/uninterrupted"


def wait_for(path: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and text in path.read_text(encoding="utf-8")):
        assert time.monotonic() < deadline, f"no {text!r} in {path} after {timeout} s"
        time.sleep(0.1)


def log_of(repo: Path, job: str) -> str:
    log = repo / f"slurm-{job}.out"
    return log.read_text(encoding="utf-8") if log.exists() else f"(no {log.name})"


@pytest.mark.slow
def test_two_node_job_takes_the_steps_of_one_process(slurm: Cluster, repos: dict[Combination, Path]) -> None:
    """Two nodes, a task on each (single layout). One node with two tasks, and two nodes in the
    other layout: the next test."""
    repo = repos[COMBINATIONS[0]]
    train(repo, *ARGUMENTS, "--output", "runs/one")
    start = time.perf_counter()
    job = slurm.submit(*SHAPES["two-nodes"], "scripts/slurm/train.sbatch", *ARGUMENTS, cwd=repo, **environment(repo))
    slurm.wait(job)
    seconds = time.perf_counter() - start
    info = slurm.job(job)
    assert info["JobState"] == "COMPLETED", log_of(repo, job)
    assert info["NodeList"] == "n[1-2]", info

    job_record = record(repo / "runs" / job)
    assert job_record["made_by"]["world_size"] == 2
    assert job_record["arguments"] == {**record(repo / "runs/one")["arguments"], "output": f"runs/{job}"}
    assert_same_run(repo / "runs" / job, repo / "runs/one")
    assert log_of(repo, job).count("epoch ") == 6  # process 0 alone reports
    print(f"two nodes: sbatch to done {seconds:.1f} s (Slurm: {info['SubmitTime']} to {info['EndTime']})")


def assert_stopped_once_and_resumed(folder: Path, log: str, signal_name: str, uninterrupted: Path) -> None:
    """The run in `folder` stopped mid-epoch on `signal_name`, started again from there, and ended
    where the uninterrupted run ended; its log holds both starts and no process was killed."""
    run = record(folder)
    first, second = run["starts"]
    assert (first["restart_count"], second["restart_count"]) == (0, 1)
    assert first["stopped"]["signal"] == signal_name
    # A step boundary within an epoch (the last step's included: a warning that arrives while it
    # runs stops the run before the epoch's evaluation).
    assert 0 < first["stopped"]["batch"] <= 64, "stopped at a step boundary within an epoch"
    assert second["resumed_from"] == {key: first["stopped"][key] for key in ("epoch", "batch", "step")}
    assert second["stopped"] is None
    assert run["history"] == record(uninterrupted)["history"]
    assert run["parameters_sha256"] == record(uninterrupted)["parameters_sha256"]
    assert "start 1," in log
    assert "start 2," in log
    assert f"stopped by {signal_name} at epoch {first['stopped']['epoch']}" in log
    assert "Killed" not in log  # every process stopped by itself, none after Slurm's KillWait


@pytest.mark.slow
def test_requeued_job_starts_again_and_ends_where_an_uninterrupted_run_ends(
    slurm: Cluster, repos: dict[Combination, Path], uninterrupted: Path
) -> None:
    """`scontrol requeue` (SIGTERM, as a preemption) of a 2-task job on one node, single layout."""
    repo = repos[COMBINATIONS[0]]
    start = time.perf_counter()
    job = slurm.submit(*SHAPES["one-node"], "scripts/slurm/train.sbatch", *LONGER, cwd=repo, **environment(repo))
    wait_for(repo / f"slurm-{job}.out", "epoch   1/4")
    stop_time = time.perf_counter()
    assert slurm.run("scontrol", "requeue", job).returncode == 0
    slurm.wait(job, requeued_now=True)
    seconds = time.perf_counter() - start
    log = log_of(repo, job)
    assert (slurm.job(job)["JobState"], slurm.job(job)["Restarts"]) == ("COMPLETED", "1"), log
    assert_stopped_once_and_resumed(repo / "runs" / job, log, "SIGTERM", uninterrupted)
    print(f"requeued: sbatch to done {seconds:.1f} s, of which {seconds - (stop_time - start):.1f} s after the requeue")


@pytest.mark.slow
def test_warned_array_task_requeues_itself_alone_and_ends_where_an_uninterrupted_run_ends(
    slurm: Cluster, repos: dict[Combination, Path], uninterrupted: Path
) -> None:
    """The warning Slurm sends before a time limit (--signal=B:USR1@...), as `scancel --batch
    --signal=USR1` sends it, to one task of a sweep on two nodes (split-JAX layout): that task
    alone stops, requeues itself and goes on; the other task runs undisturbed, and a warning that
    reaches it once its training is over requeues nothing. The warned task's job id is the
    array's own: a script that named it so would stop and requeue every task."""
    repo = repos[LAYOUTS[1]]
    (repo / "sweeps/stops.txt").write_text(f"{shlex.join(LONGER)} --seed 1\n{shlex.join(LONGER)}\n", encoding="utf-8")
    command = [*TOOLS, "sweep", "submit", "sweeps/stops.txt", "--", *SHAPES["two-nodes"]]
    submitted = run(command, cwd=repo, env={**environment(repo), **slurm.env})
    array = re.search(r"as job array (\d+)", submitted.stdout)
    assert array is not None, submitted.stdout
    wait_for(repo / f"slurm-{array[1]}_1.out", "epoch   1/4")
    assert slurm.job(f"{array[1]}_1")["JobId"] == array[1]
    assert slurm.run("scancel", "--batch", "--signal=USR1", f"{array[1]}_1").returncode == 0
    wait_for(repo / f"slurm-{array[1]}_0.out", f"wrote runs/{array[1]}_0/metrics.json")
    slurm.run("scancel", "--batch", "--signal=USR1", f"{array[1]}_0")  # too late: ends or has ended
    slurm.wait(array[1], requeued_now=True)

    logs = [log_of(repo, f"{array[1]}_{task}") for task in (0, 1)]
    assert [slurm.job(f"{array[1]}_{task}")["Restarts"] for task in (0, 1)] == ["0", "1"], logs
    assert [slurm.job(f"{array[1]}_{task}")["JobState"] for task in (0, 1)] == ["COMPLETED"] * 2, logs
    assert_stopped_once_and_resumed(repo / f"runs/{array[1]}_1", logs[1], "SIGUSR1", uninterrupted)
    assert "train.sbatch: time-limit warning" in logs[1]
    (undisturbed,) = record(repo / f"runs/{array[1]}_0")["starts"]
    assert undisturbed["stopped"] is None, logs[0]
