"""The training example learns, records what made it, resumes where it stopped and refuses bad
input: tests of a generated repo's examples/train.py, in its process, written into a render's tests/
and run there by tests/test_training.py (which runs it in two processes, with torchrun)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import parity
import pytest
import resumable
import torch
import train
from parity import Target

QUICK = ["--samples", "512", "--epochs", "3"]
# N processes reach one process's parameters up to the order of float32 sums (see train.py).
RTOL, ATOL = 1e-5, 1e-6
METRICS = ["loss", "accuracy", "held_out_loss", "held_out_accuracy"]


@pytest.fixture(autouse=True)
def _outside_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a plain `python` run, also when the tests run in a Slurm job (srun pytest)."""
    for variable in ("SLURM_JOB_ID", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(variable, raising=False)


def record(output: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((output / "metrics.json").read_text(encoding="utf-8"))
    return result


@pytest.mark.parametrize("target", parity.targets(["torch"], ["float32"]), ids=str)
def test_loss_goes_down(target: Target, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train.main([*QUICK, "--device", target.device, "--output", str(tmp_path)])
    run = record(tmp_path)
    assert list(run["history"]) == METRICS
    assert all(len(values) == 4 for values in run["history"].values())  # before, then each epoch
    assert run["final"] == {name: values[-1] for name, values in run["history"].items()}
    for name in ("loss", "held_out_loss"):  # held-out data is never trained on, yet loss falls
        assert run["final"][name] < 0.5 * run["history"][name][0]
    assert run["data"] == {"samples": 512, "held_out": train.HELD_OUT}
    assert (run["arguments"]["seed"], run["arguments"]["epochs"]) == (0, 3)
    made_by = run["made_by"]
    assert (made_by["world_size"], made_by["threads"]) == (1, torch.get_num_threads())
    assert torch.__version__.startswith(made_by["packages"]["torch"])
    assert (tmp_path / "checkpoint.pt").exists()
    assert "epoch   3/3  loss " in capsys.readouterr().out


def test_records_the_commit_and_a_hash_of_uncommitted_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Git's answers as in a repository: clean, then with a diff (the hash tells diffs apart)."""
    answers = {("rev-parse", "HEAD"): "0123abcd\n", ("diff", "HEAD"): ""}
    monkeypatch.setattr(resumable, "git", lambda *args: answers[args])
    assert resumable.made_by(1)["git_commit"] == "0123abcd"
    assert (resumable.made_by(1)["git_dirty"], resumable.made_by(1)["git_diff_sha256"]) == (
        False,
        None,
    )
    hashes = set()
    for diff in ("-a\n+b\n", "-a\n+c\n"):
        answers["diff", "HEAD"] = diff
        assert resumable.made_by(1)["git_dirty"] is True
        hashes.add(resumable.made_by(1)["git_diff_sha256"])
    assert len(hashes) == 2
    monkeypatch.setattr(resumable, "git", lambda *_: None)  # no git, or not a repository
    assert (resumable.made_by(1)["git_commit"], resumable.made_by(1)["git_dirty"]) == (None, None)


def test_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path: Path) -> None:
    train.main([*QUICK, "--output", str(tmp_path / "whole")])
    train.main([*QUICK, "--epochs", "1", "--output", str(tmp_path / "parts")])  # stopped early
    train.main([*QUICK, "--output", str(tmp_path / "parts"), "--resume"])
    whole, parts = record(tmp_path / "whole"), record(tmp_path / "parts")
    resumed_after_one_epoch = {"epoch": 2, "batch": 0, "step": 4}  # 512 samples, batches of 128
    assert [start["resumed_from"] for start in parts["starts"]] == [None, resumed_after_one_epoch]
    assert parts["history"] == whole["history"]
    assert parts["parameters_sha256"] == whole["parameters_sha256"]


@pytest.mark.parametrize(("step", "batch"), [(6, 2), (8, 4)], ids=["mid-epoch", "after-the-epochs-last-step"])
def test_run_stopped_at_a_step_resumes_to_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int, batch: int
) -> None:
    """SIGUSR1 (Slurm's time-limit warning) in a step of epoch 2 (4 steps an epoch): the run
    stops there, saves, exits 75 ("try again"); resumed, it ends where an uninterrupted run ends.
    """
    train.main([*QUICK, "--output", str(tmp_path / "whole")])
    agreed, steps = resumable.StopSignals.agreed, []

    def signal_in_step(self: Any, device: torch.device) -> int:
        steps.append(device)
        if len(steps) == step:
            signal.raise_signal(signal.SIGUSR1)  # to this process, through its real handler
        return int(agreed(self, device))

    monkeypatch.setattr(resumable.StopSignals, "agreed", signal_in_step)
    with pytest.raises(SystemExit) as stopped:
        train.main([*QUICK, "--output", str(tmp_path / "parts")])
    assert stopped.value.code == 75
    assert not (tmp_path / "parts" / "metrics.json").exists()
    monkeypatch.undo()
    train.main([*QUICK, "--output", str(tmp_path / "parts"), "--resume"])
    whole, parts = record(tmp_path / "whole"), record(tmp_path / "parts")
    first, second = parts["starts"]
    where = {"epoch": 2, "batch": batch, "step": step}
    assert first["stopped"] == {"signal": "SIGUSR1", **where, "time": ANY}
    assert second["resumed_from"] == where
    assert second["stopped"] is None
    assert parts["history"] == whole["history"]
    assert parts["parameters_sha256"] == whole["parameters_sha256"]
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL  # the handler is gone after main


@pytest.mark.parametrize(
    ("job", "restarts", "continues"),
    [("7", "1", True), ("8", "1", False), ("7", "0", False)],
    ids=["requeued-job-its-own-run", "requeued-job-another-jobs-run", "first-start"],
)
def test_slurm_job_started_again_continues_its_own_run_only(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    job: str,
    restarts: str,
    continues: bool,
) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    train.main([*QUICK, "--epochs", "1", "--output", str(tmp_path)])  # job 7 saved a checkpoint
    monkeypatch.setenv("SLURM_JOB_ID", job)
    monkeypatch.setenv("SLURM_RESTART_COUNT", restarts)  # as Slurm sets them: no --resume given
    if continues:
        train.main([*QUICK, "--output", str(tmp_path)])
        starts = record(tmp_path)["starts"]
        assert [start["restart_count"] for start in starts] == [0, 1]
        assert starts[1]["resumed_from"] == {"epoch": 2, "batch": 0, "step": 4}
    else:
        capsys.readouterr()
        with pytest.raises(SystemExit) as refused:
            train.main([*QUICK, "--output", str(tmp_path)])
        assert refused.value.code == 2
        assert "holds another run's checkpoint: pass --resume" in capsys.readouterr().err


# (id, arguments, processes (WORLD_SIZE), a checkpoint in --output first, what the error says)
BAD_INPUT = [
    ("more-processes-than-samples", [], 600, False, "600 processes but only 512 samples"),
    ("batch-does-not-split", [], 3, False, "must split evenly across 3 processes"),
    ("checkpoint-without-resume", [], 1, True, "holds another run's checkpoint: pass --resume"),
    ("resume-without-checkpoint", ["--resume"], 1, False, "--resume: no checkpoint.pt in"),
    ("resume-with-another-seed", ["--resume", "--seed", "1"], 1, True, "with --seed 0, not 1"),
    ("batch-beyond-the-data", ["--samples", "64"], 1, False, "not exceed --samples 64"),
]


@pytest.mark.parametrize(
    ("arguments", "processes", "checkpoint", "message"),
    [case[1:] for case in BAD_INPUT],
    ids=[case[0] for case in BAD_INPUT],
)
def test_refuses_bad_input(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    arguments: list[str],
    processes: int,
    checkpoint: bool,
    message: str,
) -> None:
    output = tmp_path / "run"
    if checkpoint:
        train.main([*QUICK, "--output", str(output)])
    before = {path.name: path.read_bytes() for path in output.glob("*")}
    capsys.readouterr()
    monkeypatch.setenv("WORLD_SIZE", str(processes))  # as torchrun sets it; read before starting
    with pytest.raises(SystemExit) as exit_info:
        train.main([*QUICK, "--output", str(output), *arguments])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in output.glob("*")} == before  # untouched


def test_refuses_cuda_without_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if torch.cuda.is_available():
        pytest.skip("Requires: a machine without a CUDA device")
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--device", "cuda", "--output", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    assert "--device cuda: no CUDA device found" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_tensorboard_events_hold_the_recorded_metrics(tmp_path: Path) -> None:
    """Optional (`pip install --group tensorboard`): the events match metrics.json."""
    pytest.importorskip("tensorboard", reason="Requires: the tensorboard dependency group")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    train.main([*QUICK, "--output", str(tmp_path), "--tensorboard"])
    events = EventAccumulator(str(tmp_path)).Reload()
    history = record(tmp_path)["history"]
    assert sorted(events.Tags()["scalars"]) == sorted(METRICS)
    for name, values in history.items():
        logged = [(event.step, event.value) for event in events.Scalars(name)]
        assert logged == [(epoch, pytest.approx(value)) for epoch, value in enumerate(values)]


def test_a_warning_while_a_finished_run_closes_ends_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm's time-limit warning can reach a run whose record is written while it closes (its
    TensorBoard file, its process group): too late to act on, it must not end the process, which
    Slurm would read as a failure and requeue (a sweep's task did so, on two nodes, in CI)."""
    pytest.importorskip("tensorboard", reason="Requires: the tensorboard dependency group")
    from torch.utils.tensorboard import SummaryWriter

    close = SummaryWriter.close
    sent: list[int] = []
    ended: list[int] = []

    def close_warned(writer: SummaryWriter) -> None:
        if not sent:  # once, as Slurm sends it
            sent.append(signal.SIGUSR1)
            signal.raise_signal(signal.SIGUSR1)
        close(writer)

    monkeypatch.setattr(SummaryWriter, "close", close_warned)
    # The handler main finds and restores, here in place of the default one, which ends the process.
    previous = signal.signal(signal.SIGUSR1, lambda *_: ended.append(signal.SIGUSR1))
    try:
        train.main([*QUICK, "--output", str(tmp_path), "--tensorboard"])
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert sent == [signal.SIGUSR1]
    assert ended == []
    assert record(tmp_path)["starts"][0]["stopped"] is None


def test_refuses_tensorboard_without_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        train.main([*QUICK, "--tensorboard"])
    assert refused.value.code == 2
    assert "--tensorboard writes its events to --output DIR" in capsys.readouterr().err
