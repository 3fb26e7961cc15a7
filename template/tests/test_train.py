"""The training example learns, resumes where it stopped, refuses bad input, and gives the same
parameters in two processes as in one (a slow test: `pytest -m slow`)."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest.mock import ANY

import pytest
import torch

import parity
from parity import Target

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train.py"
QUICK = ["--samples", "512", "--epochs", "3"]
# N processes reach one process's parameters up to the order of float32 sums (see train.py).
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _outside_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a plain `python` run, also when the tests run in a Slurm job (srun pytest)."""
    for variable in ("SLURM_JOB_ID", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(variable, raising=False)


def record(output: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((output / "metrics.json").read_text(encoding="utf-8"))
    return result


@pytest.mark.parametrize("target", parity.targets(["torch"], ["float32"]), ids=str)
def test_loss_goes_down(
    example: ModuleType, target: Target, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example.main([*QUICK, "--device", target.device, "--output", str(tmp_path)])
    run = record(tmp_path)
    assert len(run["losses"]) == 4  # before training, then after each epoch
    assert run["final_loss"] < 0.5 * run["losses"][0]
    assert (run["world_size"], run["seed"], run["arguments"]["epochs"]) == (1, 0, 3)
    assert run["torch_version"] == torch.__version__
    assert (tmp_path / "checkpoint.pt").exists()
    assert "epoch   3/3" in capsys.readouterr().out


def test_resumed_run_ends_where_an_uninterrupted_one_does(
    example: ModuleType, tmp_path: Path
) -> None:
    example.main([*QUICK, "--output", str(tmp_path / "whole")])
    example.main([*QUICK, "--epochs", "1", "--output", str(tmp_path / "parts")])  # stopped early
    example.main([*QUICK, "--output", str(tmp_path / "parts"), "--resume"])
    whole, parts = record(tmp_path / "whole"), record(tmp_path / "parts")
    resumed_after_one_epoch = {"epoch": 2, "batch": 0, "step": 4}  # 512 samples, batches of 128
    assert [start["resumed_from"] for start in parts["starts"]] == [None, resumed_after_one_epoch]
    assert parts["losses"] == whole["losses"]
    assert parts["parameters_sha256"] == whole["parameters_sha256"]


def test_run_stopped_mid_epoch_resumes_to_the_same_result(
    example: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGUSR1 (Slurm's time-limit warning) in step 6, the second of epoch 2: the run stops
    there, saves, exits 75 ("try again"); resumed, it ends where an uninterrupted run ends."""
    example.main([*QUICK, "--output", str(tmp_path / "whole")])
    agreed, steps = example.StopSignals.agreed, []

    def signal_in_step_6(self: Any, device: torch.device) -> int:
        steps.append(device)
        if len(steps) == 6:
            signal.raise_signal(signal.SIGUSR1)  # to this process, through its real handler
        return int(agreed(self, device))

    monkeypatch.setattr(example.StopSignals, "agreed", signal_in_step_6)
    with pytest.raises(SystemExit) as stopped:
        example.main([*QUICK, "--output", str(tmp_path / "parts")])
    assert stopped.value.code == 75
    assert not (tmp_path / "parts" / "metrics.json").exists()
    monkeypatch.undo()
    example.main([*QUICK, "--output", str(tmp_path / "parts"), "--resume"])
    whole, parts = record(tmp_path / "whole"), record(tmp_path / "parts")
    first, second = parts["starts"]
    assert first["stopped"] == {"signal": "SIGUSR1", "epoch": 2, "batch": 2, "step": 6, "time": ANY}
    assert second["resumed_from"] == {"epoch": 2, "batch": 2, "step": 6}
    assert second["stopped"] is None
    assert parts["losses"] == whole["losses"]
    assert parts["parameters_sha256"] == whole["parameters_sha256"]
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL  # the handler is gone after main


@pytest.mark.parametrize(
    ("job", "restarts", "continues"),
    [("7", "1", True), ("8", "1", False), ("7", "0", False)],
    ids=["requeued-job-its-own-run", "requeued-job-another-jobs-run", "first-start"],
)
def test_slurm_job_started_again_continues_its_own_run_only(
    example: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    job: str,
    restarts: str,
    continues: bool,
) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    example.main([*QUICK, "--epochs", "1", "--output", str(tmp_path)])  # job 7 saved a checkpoint
    monkeypatch.setenv("SLURM_JOB_ID", job)
    monkeypatch.setenv("SLURM_RESTART_COUNT", restarts)  # as Slurm sets them: no --resume given
    if continues:
        example.main([*QUICK, "--output", str(tmp_path)])
        starts = record(tmp_path)["starts"]
        assert [start["restart_count"] for start in starts] == [0, 1]
        assert starts[1]["resumed_from"] == {"epoch": 2, "batch": 0, "step": 4}
    else:
        capsys.readouterr()
        with pytest.raises(SystemExit) as refused:
            example.main([*QUICK, "--output", str(tmp_path)])
        assert refused.value.code == 2
        assert "holds another run's checkpoint: pass --resume" in capsys.readouterr().err


# (id, arguments, processes (WORLD_SIZE), a checkpoint in --output first, what the error says)
BAD_INPUT = [
    ("more-processes-than-samples", [], 600, False, "600 processes but only 512 samples"),
    ("batch-does-not-split", [], 3, False, "must split evenly across 3 processes"),
    ("checkpoint-without-resume", [], 1, True, "holds another run's checkpoint: pass --resume"),
    ("resume-without-checkpoint", ["--resume"], 1, False, "--resume: no checkpoint.pt in"),
    ("resume-with-another-seed", ["--resume", "--seed", "1"], 1, True, "with --seed 0, not 1"),
]


@pytest.mark.parametrize(
    ("arguments", "processes", "checkpoint", "message"),
    [case[1:] for case in BAD_INPUT],
    ids=[case[0] for case in BAD_INPUT],
)
def test_refuses_bad_input(
    example: ModuleType,
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
        example.main([*QUICK, "--output", str(output)])
    before = {path.name: path.read_bytes() for path in output.glob("*")}
    capsys.readouterr()
    monkeypatch.setenv("WORLD_SIZE", str(processes))  # as torchrun sets it; read before starting
    with pytest.raises(SystemExit) as exit_info:
        example.main([*QUICK, "--output", str(output), *arguments])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in output.glob("*")} == before  # untouched


def test_refuses_cuda_without_cuda(
    example: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if torch.cuda.is_available():
        pytest.skip("Requires: a machine without a CUDA device")
    with pytest.raises(SystemExit) as exit_info:
        example.main(["--device", "cuda", "--output", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    assert "--device cuda: no CUDA device found" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def torchrun(processes: int, output: Path) -> None:
    """Run the example quickly in `processes` processes on this machine (a free port for each
    run), writing to `output`."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    logs = f"{output}-logs"  # torchrun's; by default it leaves them in the temporary folder
    command = [*launcher, "--log-dir", logs, f"--nproc_per_node={processes}", str(EXAMPLE), *QUICK]
    subprocess.run([*command, "--output", output], check=True, capture_output=True, timeout=300)


@pytest.mark.slow
def test_two_processes_take_the_steps_of_one(tmp_path: Path) -> None:
    torchrun(1, tmp_path / "one")
    torchrun(2, tmp_path / "two")
    one, two = record(tmp_path / "one"), record(tmp_path / "two")
    assert (one["world_size"], two["world_size"]) == (1, 2)
    torch.testing.assert_close(two["losses"], one["losses"], rtol=RTOL, atol=ATOL)
    models = [torch.load(tmp_path / run / "checkpoint.pt")["model"] for run in ("one", "two")]
    torch.testing.assert_close(models[1], models[0], rtol=RTOL, atol=ATOL)
