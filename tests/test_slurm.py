"""The generated `scripts/slurm/train.sbatch` on a real two-node Slurm cluster started here.

The cluster (tests/slurm_cluster.py: Debian's `slurm-wlm` and `munge`, root, network namespaces)
has two nodes, n1 and n2, each with its own address and host name, so a two-node job goes through
the same rendezvous as on a real cluster: `MASTER_ADDR` from the job's node list, a rank per task,
gloo across the two addresses. Every job must take the steps of a one-process run (same losses and
parameters within train.py's stated tolerance).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, Combination, Render
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, assert_same_run, copy_of, environment, record, train

ARGUMENTS = ["--epochs", "5"]
SHAPES = {"one-node": ["--nodes=1", "--ntasks=2"], "two-nodes": ["--nodes=2", "--ntasks-per-node=1"]}


@pytest.fixture(scope="module")
def repos(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> dict[Combination, Path]:
    """A private copy of each layout's render, with a one-process run of ARGUMENTS in runs/one."""
    made = {}
    for combination in LAYOUTS:
        repo = copy_of(rendered, combination, tmp_path_factory.mktemp(combination.id) / "repo")
        train(repo, *ARGUMENTS, "--output", "runs/one")
        made[combination] = repo
    return made


def log_of(repo: Path, job: str) -> str:
    log = repo / f"slurm-{job}.out"
    return log.read_text(encoding="utf-8") if log.exists() else f"(no {log.name})"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("combination", "shape"),
    [(COMBINATIONS[0], "one-node"), (COMBINATIONS[0], "two-nodes"), (LAYOUTS[1], "two-nodes")],
    ids=lambda value: value.id if isinstance(value, Combination) else value,
)
def test_job_takes_the_steps_of_one_process(
    slurm: Cluster, repos: dict[Combination, Path], combination: Combination, shape: str
) -> None:
    repo = repos[combination]
    start = time.perf_counter()
    job = slurm.submit(*SHAPES[shape], "scripts/slurm/train.sbatch", *ARGUMENTS, cwd=repo, **environment(repo))
    slurm.wait(job)
    seconds = time.perf_counter() - start
    info = slurm.job(job)
    assert info["JobState"] == "COMPLETED", log_of(repo, job)
    assert info["NodeList"] == ("n[1-2]" if shape == "two-nodes" else info["BatchHost"]), info

    job_record = record(repo / "runs" / job)
    assert job_record["world_size"] == 2
    assert job_record["arguments"] == {**record(repo / "runs/one")["arguments"], "output": f"runs/{job}"}
    assert_same_run(repo / "runs" / job, repo / "runs/one")
    assert log_of(repo, job).count("epoch ") == 6  # process 0 alone reports
    print(f"{shape}: sbatch to done {seconds:.1f} s (Slurm: {info['SubmitTime']} to {info['EndTime']})")
