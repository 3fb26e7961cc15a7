"""The generated training example at every scale: one process, two torchrun processes, and a run
stopped and resumed.

Two processes must reach the parameters of one within the tolerance that `examples/train.py`
states (the batch-size option is the global batch); a resumed run must end bit for bit where an
uninterrupted one does. `examples/train.py` is the same file in every combination of options, but
it imports the package, whose modules differ by layout: the comparisons run in both layouts
(single without JAX, split with JAX). Jobs on a real Slurm cluster: tests/test_slurm.py.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from unittest.mock import ANY

import pytest
import torch

from tests.render import COMBINATIONS, Render, quick_share
from tests.training import (
    LAYOUTS,
    TORCHRUN,
    assert_same_run,
    copy_of,
    environment,
    record,
    run_cases,
    running,
    train,
)


@pytest.fixture
def repo(rendered: Render, request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A private copy of a render (the test's `combination` parameter, or the first one)."""
    return copy_of(rendered, getattr(request, "param", COMBINATIONS[0]), tmp_path / "repo")


@pytest.mark.slow
def test_training_example_in_its_own_process(repo: Path) -> None:
    """tests/train_cases.py: learns, records what made it, resumes where it stopped (a signal in
    step 6, a Slurm requeue), refuses bad input, writes TensorBoard events."""
    run_cases(repo, Path(__file__).with_name("train_cases.py"))


@pytest.mark.slow
def test_training_example_learns(repo: Path) -> None:
    output, _ = train(repo, "--epochs", "3")
    losses = [float(loss) for loss in re.findall(r"/\d+  loss (\d+\.\d+)", output)]
    assert len(losses) == 4, output
    assert losses == sorted(losses, reverse=True), output
    assert losses[-1] < 0.25 * losses[0], output
    if not torch.cuda.is_available():
        refused = subprocess.run(
            [sys.executable, "examples/train.py", "--device", "cuda"],
            cwd=repo,
            env=environment(repo),
            capture_output=True,
            text=True,
            check=False,
        )
        assert refused.returncode == 2
        assert "no CUDA device found" in refused.stderr


@pytest.mark.slow
# single: `nox -s proofs` (the default stops a single-layout run mid-epoch in one process, below).
@pytest.mark.parametrize("repo", quick_share(LAYOUTS, LAYOUTS[1:], ids=lambda c: c.id), indirect=True)
def test_two_processes_take_the_steps_of_one(repo: Path) -> None:
    log_one, seconds_one = train(repo, "--output", "runs/one")
    log_two, seconds_two = train(repo, "--output", "runs/two", processes=2)
    one, two = record(repo / "runs/one"), record(repo / "runs/two")
    assert (one["made_by"]["world_size"], two["made_by"]["world_size"]) == (1, 2)
    assert one["arguments"]["batch_size"] == two["arguments"]["batch_size"] == 128
    assert_same_run(repo / "runs/two", repo / "runs/one")
    # Only process 0 reports: one line per epoch (and the one before training), as with one process.
    assert log_two.count("epoch ") == log_one.count("epoch ") == 21
    print(f"1 process: {seconds_one:.1f} s, 2 torchrun processes: {seconds_two:.1f} s (wall, default arguments)")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("repo", "processes"),
    [(LAYOUTS[0], 1), (LAYOUTS[1], 2)],
    ids=["single-one-process", "split-jax-two-torchrun-processes"],
    indirect=["repo"],
)
def test_run_stopped_mid_epoch_ends_where_an_uninterrupted_one_does(repo: Path, processes: int) -> None:
    # 64 steps an epoch: SIGTERM after epoch 2 reaches the processes early in epoch 3.
    arguments = ["--samples", "8192", "--epochs", "4"]
    train(repo, *arguments, "--output", "runs/whole", processes=processes)

    parts = str(repo / "runs/parts")  # absolute: it names this test's processes on the machine
    launcher = [*TORCHRUN, f"--nproc_per_node={processes}"] if processes > 1 else [sys.executable]
    command = [*launcher, "examples/train.py", *arguments, "--output", parts]
    process = subprocess.Popen(
        command, cwd=repo, env=environment(repo), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    for line in process.stdout:  # process 0 reports an epoch after saving its checkpoint
        if line.startswith("epoch   2/"):
            # As `scancel` or a preemption does; torchrun passes SIGTERM on to its processes.
            process.send_signal(signal.SIGTERM)
            break
    output = process.communicate(timeout=60)[0]
    assert process.returncode == (143 if processes == 1 else 1), output  # torchrun: 1 on any signal
    stopped = re.search(r"^stopped by SIGTERM at epoch 3, batch (\d+): saved$", output, re.MULTILINE)
    assert stopped is not None, output
    assert 0 < int(stopped[1]) < 64, "at a step boundary of epoch 3"
    assert not running(parts), "training processes outlived torchrun"
    assert not (repo / "runs/parts/metrics.json").exists()

    log, _ = train(repo, *arguments, "--output", parts, "--resume", processes=processes)
    assert f"resuming {parts} at epoch 3, batch {stopped[1]}" in log
    whole, resumed = record(repo / "runs/whole"), record(repo / "runs/parts")
    first, second = resumed["starts"]
    assert first["stopped"] == {"signal": "SIGTERM", "epoch": 3, "batch": int(stopped[1]), "step": ANY, "time": ANY}
    assert second["resumed_from"] == {"epoch": 3, "batch": int(stopped[1]), "step": 128 + int(stopped[1])}
    assert resumed["history"] == whole["history"]
    assert resumed["parameters_sha256"] == whole["parameters_sha256"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("processes", "arguments", "message"),
    [
        (2, ["--samples", "1"], "2 processes but only 1 samples"),
        (2, ["--batch-size", "127"], "must split evenly across 2 processes"),
    ],
    ids=["more-processes-than-samples", "batch-does-not-split"],
)
def test_torchrun_refuses_bad_input_once(repo: Path, processes: int, arguments: list[str], message: str) -> None:
    command = [*TORCHRUN, f"--nproc_per_node={processes}", "examples/train.py", *arguments]
    result = subprocess.run(command, cwd=repo, env=environment(repo), capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert result.stderr.count("train.py: error:") == 1, result.stderr  # from process 0 only


@pytest.mark.parametrize(
    ("folder", "variables", "message"),
    [
        (".", {}, "not in a Slurm job: submit it, e.g. `sbatch --nodes=1 --ntasks=2"),
        ("src", {"SLURM_JOB_ID": "7"}, "submit the job from the repo's root"),
        (".", {"SLURM_JOB_ID": "7", "SLURM_ARRAY_TASK_ID": "0"}, "submit it with `parity sweep submit"),
    ],
    ids=["outside-slurm", "outside-the-repo", "array-without-a-sweep"],
)
def test_sbatch_script_says_how_to_submit_it(
    rendered: Render, folder: str, variables: dict[str, str], message: str
) -> None:
    repo = rendered("cookiecutter", COMBINATIONS[0])
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")} | variables
    script = repo / "scripts/slurm/train.sbatch"
    result = subprocess.run(["bash", script], cwd=repo / folder, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert message in result.stderr


# Stand-ins for Slurm's commands: srun gets the time-limit warning sent to the job script while it
# runs, as Slurm sends it, and ends 0.1 s later with the training's status; scancel, which the
# script's trap calls, takes 0.5 s, so srun ends while the trap runs. scontrol records a requeue.
FAKE_SLURM = {
    "srun": """until [[ -s "$STUB/batch.pid" ]]; do sleep 0.01; done
kill -USR1 "$(cat "$STUB/batch.pid")"; sleep 0.1; exit "$TRAINING_STATUS"
""",
    "scancel": "sleep 0.5\n",
    "scontrol": """if [[ $1 == requeue ]]; then echo "$2" >> "$STUB/requeued"; else echo n1; fi\n""",
}


@pytest.mark.parametrize(("status", "requeued"), [(0, False), (75, True)], ids=["finished", "stopped"])
def test_sbatch_script_requeues_a_warned_job_by_its_trainings_status(
    rendered: Render, tmp_path: Path, status: int, requeued: bool
) -> None:
    """A warning that reaches the job script as its training ends: a finished training (0) ends
    the job with 0 and requeues nothing; a training stopped by the warning (75, after saving) is
    requeued. Before, the script read the status of the `wait` that the trap cut short (138)."""
    repo = rendered("cookiecutter", COMBINATIONS[0])
    for name, body in FAKE_SLURM.items():
        (tmp_path / name).write_text("#!/bin/bash\n" + body, encoding="utf-8")
        (tmp_path / name).chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")} | {
        "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
        "STUB": str(tmp_path),
        "TRAINING_STATUS": str(status),
        "SLURM_JOB_ID": "7",
        "SLURM_JOB_NODELIST": "n1",
    }
    script = repo / "scripts/slurm/train.sbatch"
    with subprocess.Popen(["bash", script], cwd=repo, env=env, stdout=subprocess.PIPE, text=True) as job:
        (tmp_path / "batch.pid").write_text(str(job.pid), encoding="utf-8")
        output, _ = job.communicate(timeout=30)
    assert "train.sbatch: time-limit warning" in output
    assert job.returncode == status, output
    assert (tmp_path / "requeued").exists() == requeued, output
