"""Stop, save, resume and record a training run: the machinery behind examples/train.py.

A run is one training at any scale: a plain `python` process, N processes started by torchrun,
or a Slurm job (scripts/slurm/train.sbatch sets RANK, LOCAL_RANK and WORLD_SIZE from Slurm's
variables). With several processes, `Run` joins the process group (NCCL on GPUs, gloo on CPUs)
and wraps the model in DistributedDataParallel; process 0 alone prints, saves and records.

**Folder.** With `--output DIR`, process 0 saves `DIR/checkpoint.pt` after every epoch (to a
temporary file, then renamed: an interruption never leaves half a checkpoint) and writes
`DIR/metrics.json` at the end: every epoch's metrics, a SHA-256 checksum of the final parameters,
the arguments, what made the run (git commit, whether tracked files had uncommitted changes and a
hash of that diff, package versions, Python, host, world size, torch's threads) and each start of
the run. `--tensorboard` also writes TensorBoard event files there (`pip install tensorboard`).

**Stops.** SIGTERM (scancel, a preemption, `scontrol requeue`) and SIGUSR1 (Slurm's warning before
the time limit, which train.sbatch passes on, then requeues the job) do not kill the run: every
process stops at the next step boundary, the same step in all (they agree through an all-reduce),
process 0 saves where it stopped, mid-epoch included, and the run exits 143 after SIGTERM (as a
shell reports it) or 75 (EX_TEMPFAIL, "try again") after SIGUSR1. Ctrl-C (SIGINT) stops at once.
Leave the warning time enough to finish a step and save: after SIGTERM, Slurm kills the processes
once its KillWait (30 s by default) has passed.

**Resumes.** `--resume` continues the run in DIR. A Slurm job started again (a requeue: the same
SLURM_JOB_ID with SLURM_RESTART_COUNT > 0) continues its own checkpoint without it; a new run
never takes another run's folder. Each epoch's data order follows from the seed, so a resumed run
skips the batches already taken and ends bit for bit where an uninterrupted run ends (a model
with dropout would also save and restore torch's random state). The options that decide the steps
must not change on resume. `metrics.json` lists each start: its time, restart count, where it
resumed and the signal that stopped it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, NoReturn, Self

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

CHECKPOINT, RECORD = "checkpoint.pt", "metrics.json"
# Exit statuses of a stopped run: as a shell reports SIGTERM, and EX_TEMPFAIL after the warning.
EXIT_STATUS = {signal.SIGTERM: 128 + signal.SIGTERM, signal.SIGUSR1: 75}
PACKAGES = ("torch", "numpy")
# What a problem check gets: the command line and the number of processes.
Check = Callable[[argparse.Namespace, int], str | None]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a run, beside the training's own."""
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, mps... (default: cpu)")
    parser.add_argument(
        "--deterministic", action="store_true", help="only deterministic algorithms (on GPUs)"
    )
    parser.add_argument("--output", type=Path, help="folder for the checkpoint and metrics.json")
    parser.add_argument("--resume", action="store_true", help="continue the run in --output")
    parser.add_argument(
        "--tensorboard", action="store_true", help="also write TensorBoard events to --output"
    )


def run_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the run's own options on this machine, if anything."""
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return "--device cuda: no CUDA device found (torch.cuda.is_available()); use --device cpu"
    if device.type == "mps" and not torch.backends.mps.is_available():
        return "--device mps: no MPS device found (torch.backends.mps); use --device cpu"
    if args.tensorboard and args.output is None:
        return "--tensorboard writes its events to --output DIR: pass a folder"
    if args.tensorboard and importlib.util.find_spec("tensorboard") is None:
        return "--tensorboard needs the tensorboard package: pip install --group tensorboard"
    if args.resume and args.output is None:
        return "--resume continues the run in --output DIR: pass its folder"
    checkpoint = args.output / CHECKPOINT if args.output else None
    if checkpoint and checkpoint.exists() and not args.resume:
        return (
            f"{checkpoint} holds another run's checkpoint: pass --resume to continue that run, "
            f"or choose another --output"
        )
    if checkpoint and args.resume and not checkpoint.exists():
        return f"--resume: no {CHECKPOINT} in {args.output}; start the run without --resume"
    return None


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The command line's values, in types that JSON and weights-only checkpoints hold."""
    values = vars(args).items()
    return {key: str(value) if isinstance(value, Path) else value for key, value in values}


def git(*args: str) -> str | None:
    """The output of `git ARGS` in this script's folder; None without git or a repository."""
    command = ["git", "-C", str(Path(__file__).parent), *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError:  # git is not installed
        return None
    return done.stdout if done.returncode == 0 else None


def made_by(world_size: int) -> dict[str, Any]:
    """What changes a run's result besides its arguments: the code, the software, the machine."""
    commit = git("rev-parse", "HEAD")
    diff = git("diff", "HEAD") if commit else None  # tracked files: staged and not
    return {
        "git_commit": commit.strip() if commit else None,
        "git_dirty": bool(diff) if commit else None,
        "git_diff_sha256": hashlib.sha256(diff.encode()).hexdigest() if diff else None,
        "python": platform.python_version(),
        "packages": {name: importlib.metadata.version(name) for name in PACKAGES},
        "host": socket.gethostname(),
        "world_size": world_size,
        "threads": torch.get_num_threads(),
    }


def checksum(model: torch.nn.Module) -> str:
    """SHA-256 of the parameters' bytes: equal only for bit-identical parameters."""
    digest = hashlib.sha256()
    for tensor in model.state_dict().values():
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


def now() -> str:
    """The time in UTC, to the second, as metrics.json records it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class StopSignals:
    """Records SIGTERM and SIGUSR1 instead of dying; training acts on them at a step boundary."""

    def __init__(self) -> None:
        self.received = 0  # the strongest signal received (SIGTERM over SIGUSR1), 0 for none
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> Self:
        for number in EXIT_STATUS:
            self.previous[number] = signal.signal(number, self.record)
        return self

    def __exit__(self, *_: object) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def record(self, number: int, _frame: FrameType | None) -> None:
        self.received = max(self.received, number)

    def agreed(self, device: torch.device) -> int:
        """The signal every process stops on at this step boundary (0: go on), the same in all:
        the strongest any of them received, through an all-reduce that all of them call."""
        flag = torch.tensor([self.received], device=device)
        if dist.is_initialized():
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return int(flag.item())


class StoppedError(Exception):
    """Every process stopped at the same step boundary; process 0 saved the checkpoint."""

    def __init__(self, number: int) -> None:
        super().__init__(signal.Signals(number).name)
        self.exit_status = EXIT_STATUS[signal.Signals(number)]


def ignore_stop_signals() -> None:
    """Ignore SIGTERM and SIGUSR1 outside the run, before its handlers replace this and once they
    restore it: a job whose training is done is not to be stopped or requeued. Set before the run,
    not after, it leaves no moment between the two in which a signal ends a finished run."""
    for number in EXIT_STATUS:
        signal.signal(number, signal.SIG_IGN)


def exit_now() -> NoReturn:
    """End the process at once, the run done, saved and its process group closed: while Python
    shuts down, torch 2.13's gloo threads sometimes abort the process (SIGABRT, "terminate called
    without an active exception", in 3 CI runs of this example under torchrun), which would make a
    finished run look failed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class Run:
    """One run as this process sees it: its rank, device, checkpoint, stops and record.

    Creating it checks the command line (`check` for the training's options, then the run's own)
    and reads the checkpoint to continue; `with` joins the process group and catches the stop
    signals; leaving closes the group in all processes together, and a stop exits with its status.
    """

    def __init__(
        self,
        parser: argparse.ArgumentParser,
        args: argparse.Namespace,
        check: Check,
        same_on_resume: tuple[str, ...],
    ) -> None:
        self.parser, self.args = parser, args
        self.rank = int(os.environ.get("RANK", "0"))
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.checkpoint = self._restarted_jobs_checkpoint()
        args.resume = args.resume or self.checkpoint is not None
        problem = check(args, self.world_size) or run_problem(args)
        if problem:
            self.fail(problem)
        if args.resume and self.checkpoint is None:
            self.checkpoint = torch.load(
                args.output / CHECKPOINT, map_location="cpu", weights_only=True
            )
        saved = self.checkpoint or {}
        for name in same_on_resume if saved else ():
            before, value = saved["arguments"][name], vars(args)[name]
            if before != value:
                option = "--" + name.replace("_", "-")
                self.fail(
                    f"--resume: {args.output} was trained with {option} {before}, not {value}"
                )
        self.history: dict[str, list[float]] = saved.get("history", {})
        self.position: dict[str, int] = saved.get("position", {"epoch": 1, "batch": 0})
        self.starts: list[dict[str, Any]] = saved.get("starts", [])
        self.this_start: dict[str, Any] = {
            "time": now(),
            "restart_count": int(os.environ.get("SLURM_RESTART_COUNT", "0")),
            "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "world_size": self.world_size,
            "resumed_from": None,
            "stopped": None,
        }
        self.device = self._set_up()
        self.stop = StopSignals()
        self.writer: Any = None
        self.steps_per_epoch = 0
        self.model: torch.nn.Module | None = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.start_time = time.perf_counter()

    def fail(self, message: str) -> NoReturn:
        """Refuse the command line: process 0 says why (exit 2), the others leave quietly, so that
        torchrun and srun stop every process at process 0's failure, its message printed."""
        if self.rank == 0:
            self.parser.error(message)
        sys.exit(0)

    def _restarted_jobs_checkpoint(self) -> dict[str, Any] | None:
        """The checkpoint in --output if Slurm started this job again and this job saved it."""
        output, job = self.args.output, os.environ.get("SLURM_JOB_ID")
        restarted = int(os.environ.get("SLURM_RESTART_COUNT", "0")) > 0
        if self.args.resume or not restarted or not output or not (output / CHECKPOINT).exists():
            return None
        saved: dict[str, Any] = torch.load(
            output / CHECKPOINT, map_location="cpu", weights_only=True
        )
        return saved if saved.get("slurm_job_id") == job else None

    def _set_up(self) -> torch.device:
        """Make the output folder, restrict to deterministic algorithms if asked; the device."""
        if self.args.output:
            self.args.output.mkdir(parents=True, exist_ok=True)
        if self.args.deterministic:
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed by cuBLAS
            torch.use_deterministic_algorithms(True)
            torch.backends.cudnn.benchmark = False
        device = torch.device(self.args.device)
        if self.args.device == "cuda":  # no index given: one GPU per process on the node
            local_rank = int(os.environ.get("LOCAL_RANK", "0"))
            device = torch.device("cuda", local_rank % torch.cuda.device_count())
        if device.type == "cuda":
            torch.cuda.set_device(device)
        return device

    def __enter__(self) -> Self:
        self.stop.__enter__()
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        if self.args.tensorboard and self.rank == 0:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(self.args.output)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: TracebackType | None
    ) -> None:
        if self.writer is not None:
            self.writer.close()
        # Not after an error: torchrun stops the others, and a barrier would wait for them.
        if (kind is None or isinstance(error, StoppedError)) and dist.is_initialized():
            dist.barrier()  # a process that left early made process 0 abort while it saved
            dist.destroy_process_group()
        # Only now: a time-limit warning that reaches a finished run while it closes is recorded
        # and ignored, where the default action would end it and Slurm requeue the job.
        self.stop.__exit__()
        if isinstance(error, StoppedError):
            sys.exit(error.exit_status)

    def prepare(
        self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, steps_per_epoch: int
    ) -> torch.nn.Module:
        """Restore the checkpoint's state, if any; the model to train: data parallel if the run
        has several processes (gradients averaged during backward())."""
        self.model, self.optimizer, self.steps_per_epoch = model, optimizer, steps_per_epoch
        if self.checkpoint is not None:
            model.load_state_dict(self.checkpoint["model"])
            optimizer.load_state_dict(self.checkpoint["optimizer"])
            at = self.this_start["resumed_from"] = self._where(**self.position)
            self.say(f"resuming {self.args.output} at epoch {at['epoch']}, batch {at['batch']}")
        if not dist.is_initialized():
            return model
        ids = [self.device] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def epochs(self, last: int) -> Iterator[int]:
        """The epochs to train, from where a resumed run stopped; 0 first: before training."""
        yield from range(0 if self.checkpoint is None else self.position["epoch"], last + 1)

    def batches_done(self, epoch: int) -> int:
        """How many batches of `epoch` a resumed run already took (0 for other epochs)."""
        return self.position["batch"] if epoch == self.position["epoch"] else 0

    def step_done(self, epoch: int, batch: int) -> None:
        """After each step: stop here, in every process, if any of them received a signal."""
        number = self.stop.agreed(self.device)
        if number:
            name = signal.Signals(number).name
            self.this_start["stopped"] = {
                "signal": name,
                "time": now(),
                **self._where(epoch, batch),
            }
            self._save(epoch, batch)
            self.say(f"stopped by {name} at epoch {epoch}, batch {batch}: saved")
            raise StoppedError(number)

    def end_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Record the epoch's metrics, save the checkpoint, then report (a reported epoch can be
        resumed)."""
        for name, value in metrics.items():
            self.history.setdefault(name, []).append(value)
            if self.writer is not None:
                self.writer.add_scalar(name, value, epoch)
        self._save(epoch + 1, 0)
        report = "  ".join(
            f"{name.replace('_', ' ')} {value:.4f}" for name, value in metrics.items()
        )
        self.say(f"epoch {epoch:3d}/{self.args.epochs}  {report}")

    def finish(self, **details: Any) -> None:
        """Process 0: write the run's record, metrics.json, with `details` (the data's size...)."""
        if self.rank != 0 or not self.args.output or self.model is None:
            return
        record = {
            "final": {name: values[-1] for name, values in self.history.items()},
            "history": self.history,  # before training, then after each epoch
            "parameters_sha256": checksum(self.model),
            "arguments": arguments(self.args),
            "made_by": made_by(self.world_size),
            "starts": [*self.starts, self.this_start],
            "seconds": time.perf_counter() - self.start_time,  # of the last start
            **details,
        }
        path = self.args.output / RECORD
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        self.say(f"wrote {path}")

    def say(self, message: str) -> None:
        """Print on process 0 only: one report, not one per process."""
        if self.rank == 0:
            print(message, flush=True)

    def _where(self, epoch: int, batch: int) -> dict[str, int]:
        return {"epoch": epoch, "batch": batch, "step": (epoch - 1) * self.steps_per_epoch + batch}

    def _save(self, epoch: int, batch: int) -> None:
        """Process 0: the state after `batch` batches of `epoch`, renamed into place when whole."""
        if self.rank != 0 or not self.args.output or self.model is None or self.optimizer is None:
            return
        path = self.args.output / CHECKPOINT
        partial = path.with_name(path.name + ".partial")
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "position": {"epoch": epoch, "batch": batch},
            "history": self.history,
            "arguments": arguments(self.args),
            "starts": [*self.starts, self.this_start],
            "slurm_job_id": os.environ.get("SLURM_JOB_ID"),  # whose run this is
        }
        torch.save(state, partial)
        partial.replace(path)
