"""Time a generated repo's Slurm jobs on the two-node test cluster (tests/slurm_cluster.py).

    python -m benchmarks.slurm --repeat 3      (from the repo's root; as root, with Slurm installed)

Prints a Markdown table of seconds from `sbatch` to the end of each job, two ways: wall time until
`squeue` no longer lists it (polled every 0.25 s), and Slurm's own SubmitTime to EndTime (whole
seconds). The jobs run the default training (2048 samples, 20 epochs): a two-node job (one task
per node), and a sweep of 4 runs (2 learning rates x 2 seeds) as a job array, 4 at a time. Then
a 2-task job (8192 samples, 4 epochs) requeued with `scontrol requeue` after its first epoch:
the seconds until it is pending again (its processes saved a checkpoint and ended) and until it
runs again, started 2 s after it is pending (`scontrol update StartTime=now`, as the tests do)
or when Slurm's hold on a requeued job ends (about 2 minutes). The load average before each job
says how busy the machine was.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import tempfile
import time
from pathlib import Path

from benchmarks.repos import cookiecutter_command
from benchmarks.timing import run
from tests.render import COMBINATIONS, ROOT, TOOLS, only_child
from tests.slurm_cluster import Cluster, two_node_cluster, why_no_cluster
from tests.training import environment

SWEEP = "--lr 0.1 --seed 0\n--lr 0.1 --seed 1\n--lr 0.5 --seed 0\n--lr 0.5 --seed 1\n"
LONGER = ["--samples", "8192", "--epochs", "4"]  # as tests/test_slurm.py requeues


def slurm_seconds(cluster: Cluster, job: str) -> int:
    """SubmitTime to EndTime of a job, or of the last task of an array, in whole seconds."""
    shown = cluster.run("scontrol", "show", "job", "--oneliner", job).stdout.splitlines()
    submit = min(re.findall(r"SubmitTime=(\S+)", " ".join(shown)))
    end = max(re.findall(r"EndTime=(\S+)", " ".join(shown)))
    return int((dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(submit)).total_seconds())


def two_node_job(cluster: Cluster, repo: Path) -> tuple[float, int]:
    start = time.perf_counter()
    job = cluster.submit("--nodes=2", "--ntasks-per-node=1", "scripts/slurm/train.sbatch", cwd=repo)
    cluster.wait(job)
    assert cluster.job(job)["JobState"] == "COMPLETED", (repo / f"slurm-{job}.out").read_text()
    return time.perf_counter() - start, slurm_seconds(cluster, job)


def array_of_four(cluster: Cluster, repo: Path) -> tuple[float, int]:
    (repo / "sweeps/four.txt").write_text(SWEEP, encoding="utf-8")
    start = time.perf_counter()
    command = [*TOOLS, "sweep", "submit", "sweeps/four.txt", "--max-parallel", "4"]
    submitted = run(command, cwd=repo, env={**os.environ, **cluster.env})
    array = re.search(r"as job array (\d+)", submitted.stdout)
    assert array is not None, submitted.stdout
    cluster.wait(array[1])
    states = [cluster.job(f"{array[1]}_{task}")["JobState"] for task in range(4)]
    assert states == ["COMPLETED"] * 4, states
    return time.perf_counter() - start, slurm_seconds(cluster, array[1])


def requeued_job(cluster: Cluster, repo: Path, hold: bool = False) -> tuple[float, float, float]:
    """A 2-task job requeued with `scontrol requeue` once its first epoch is reported, started
    again 2 s after it is pending (`scontrol update StartTime=now`; tests/slurm_cluster.py says
    why not sooner) or, with `hold`, when Slurm's hold ends: the
    seconds from sbatch to done, and from the requeue to the job pending (its processes saved and
    ended) and to it running again."""
    start = time.perf_counter()
    job = cluster.submit("--nodes=1", "--ntasks=2", "scripts/slurm/train.sbatch", *LONGER, cwd=repo)
    log = repo / f"slurm-{job}.out"
    while not (log.exists() and "epoch   1/" in log.read_text(encoding="utf-8")):
        time.sleep(0.05)
    requeued = time.perf_counter()
    cluster.run("scontrol", "requeue", job)
    pending = running = 0.0
    while (state := cluster.job(job)["JobState"]) != "COMPLETED":
        if state == "PENDING":
            pending = pending or time.perf_counter() - requeued
            if not hold and time.perf_counter() - requeued - pending >= 2:  # as Cluster.wait does
                cluster.run("scontrol", "update", f"JobId={job}", "StartTime=now")
        elif state == "RUNNING" and pending:
            running = running or time.perf_counter() - requeued
        time.sleep(0.1)
    assert cluster.job(job)["Restarts"] == "1", log.read_text(encoding="utf-8")
    return time.perf_counter() - start, pending, running


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.slurm", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="jobs of each kind (default: 3)")
    parser.add_argument("--held", type=int, default=1, help="requeued jobs left to Slurm's hold (1)")
    args = parser.parse_args(argv)
    reason = why_no_cluster()
    if reason:
        raise SystemExit(f"benchmarks.slurm: {reason}")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        run(cookiecutter_command(ROOT, Path(scratch, "render"), COMBINATIONS[0]))
        repo = only_child(Path(scratch, "render"))
        os.environ.update(environment(repo))  # the job inherits the package and this Python
        (folder := Path(scratch, "slurm")).mkdir()
        with two_node_cluster(folder) as cluster:
            for kind, measure in [("two-node job", two_node_job), ("4-run job array", array_of_four)]:
                for _ in range(args.repeat):
                    load = os.getloadavg()[0]
                    wall, slurm = measure(cluster, repo)
                    rows.append(f"| {kind} | {wall:.1f} s | {slurm} s | {load:.1f} |")
            requeues = []
            for hold in [False] * args.repeat + [True] * args.held:
                load = os.getloadavg()[0]
                wall, pending, running = requeued_job(cluster, repo, hold)
                kind = "requeued, Slurm's hold" if hold else "requeued, started 2 s after"
                requeues.append(f"| {kind} | {wall:.1f} s | {pending:.1f} s | {running:.1f} s | {load:.1f} |")
    print("| job | sbatch to done (wall) | Slurm: SubmitTime to EndTime | load average |")
    print("| --- | --- | --- | --- |")
    print("\n".join(rows))
    print("\n| 2-task job, requeued after epoch 1 of 4 | sbatch to done | requeue to pending (saved) |", end="")
    print(" requeue to running again | load average |")
    print("| --- | --- | --- | --- | --- |")
    print("\n".join(requeues))


if __name__ == "__main__":
    main()
