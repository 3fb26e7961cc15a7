"""Train softmax regression on synthetic data with the PyTorch implementations and autograd.

The model is a linear map from features to class scores (logits). `cross_entropy` is the loss
and `softmax` turns scores into probabilities: given tensors, this package's public functions
run their PyTorch implementations, which the tests check against the NumPy references.

The same script runs in one process or in several, data parallel:

    python examples/train.py                  # one process, on the CPU, in a few seconds
    python examples/train.py --device cuda    # on a GPU
    python -m torch.distributed.run --standalone --nproc_per_node=2 examples/train.py
    sbatch --nodes=1 --ntasks=2 scripts/slurm/train.sbatch    # on a Slurm cluster

Several processes (torchrun or the Slurm script set RANK, LOCAL_RANK and WORLD_SIZE) form a
process group (NCCL on GPUs, gloo on CPUs). `--batch-size` is the global batch: each of N
processes takes 1/N of every batch and DistributedDataParallel averages their gradients, so N
processes take the same steps as one. Only the order of float32 sums differs: losses and final
parameters agree with a one-process run within rtol=1e-5, atol=1e-6 (tests/test_train.py).

With `--output DIR`, process 0 saves `DIR/checkpoint.pt` after every epoch and writes the run's
record, `DIR/metrics.json`, at the end; `--resume` continues from the checkpoint and ends where
an uninterrupted run ends.

Stopped by SIGTERM (scancel, a preemption, `scontrol requeue`) or SIGUSR1 (Slurm's warning before
the time limit, which scripts/slurm/train.sbatch passes on, then requeues the job), every process
stops at the next step boundary, the same step in all: they agree on it through an all-reduce.
Process 0 saves where it stopped, mid-epoch included: each epoch's data order follows from the
seed, so the resumed run skips the batches already taken and takes the same steps (a model with
dropout would also save and restore torch's random state). The run then exits 143 after SIGTERM,
75 ("try again") after SIGUSR1. A Slurm job that starts again (SLURM_RESTART_COUNT > 0) continues
its own checkpoint by itself; `metrics.json` lists each start: its time, restart count, where it
resumed and the signal that stopped it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, Self

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from {{ cookiecutter.package_name }} import cross_entropy, softmax

FEATURES, CLASSES = 8, 4
CHECKPOINT, RECORD = "checkpoint.pt", "metrics.json"
# They decide every step of a run: resuming with other values would train another model.
SAME_ON_RESUME = ("seed", "lr", "batch_size", "samples")
# A run stopped by these signals saves a checkpoint and exits with the status given: 143 as a
# shell reports SIGTERM, and 75, EX_TEMPFAIL ("try again"), after the time-limit warning.
EXIT_STATUS = {signal.SIGTERM: 128 + signal.SIGTERM, signal.SIGUSR1: 75}


def make_blobs(
    samples: int, features: int, classes: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One Gaussian cluster of unit variance per class, around random centres."""
    centres = 3.0 * torch.randn(classes, features, generator=generator)
    labels = torch.randint(classes, (samples,), generator=generator)
    points = centres[labels] + torch.randn(samples, features, generator=generator)
    return points, labels


def parse_arguments(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, mps... (default: cpu)")
    parser.add_argument("--epochs", type=int, default=20, help="passes over the data (default: 20)")
    parser.add_argument("--lr", type=float, default=0.5, help="learning rate (default: 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data, model and batches")
    parser.add_argument(
        "--batch-size", type=int, default=128, help="global batch, split across processes (128)"
    )
    parser.add_argument("--samples", type=int, default=2048, help="size of the data set (2048)")
    parser.add_argument(
        "--deterministic", action="store_true", help="only deterministic algorithms (on GPUs)"
    )
    parser.add_argument("--output", type=Path, help="folder for the checkpoint and metrics.json")
    parser.add_argument("--resume", action="store_true", help="continue the run in --output")
    return parser, parser.parse_args(argv)


def problem_with(args: argparse.Namespace, world_size: int) -> str | None:
    """What is wrong with this command line for `world_size` processes, if anything."""
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return "--device cuda: no CUDA device found (torch.cuda.is_available()); use --device cpu"
    if device.type == "mps" and not torch.backends.mps.is_available():
        return "--device mps: no MPS device found (torch.backends.mps); use --device cpu"
    if world_size > args.samples:
        return (
            f"{world_size} processes but only {args.samples} samples: start at most "
            f"{args.samples} processes, or pass --samples {world_size} or more"
        )
    if args.batch_size % world_size or not 0 < args.batch_size <= args.samples:
        return (
            f"--batch-size {args.batch_size} is the global batch: it must split evenly across "
            f"{world_size} processes and not exceed --samples {args.samples}; use a multiple "
            f"of {world_size} up to {args.samples}"
        )
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


def changed_since(checkpoint: dict[str, Any], args: argparse.Namespace) -> str | None:
    """The first argument that differs from the checkpoint's run, as an error message."""
    for name in SAME_ON_RESUME:
        before, now = checkpoint["arguments"][name], vars(args)[name]
        if before != now:
            option = "--" + name.replace("_", "-")
            return f"--resume: {args.output} was trained with {option} {before}, not {now}"
    return None


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The command line's values, in types that JSON and weights-only checkpoints hold."""
    values = vars(args).items()
    return {key: str(value) if isinstance(value, Path) else value for key, value in values}


def checksum(model: torch.nn.Module) -> str:
    """SHA-256 of the parameters' bytes: equal only for bit-identical parameters."""
    digest = hashlib.sha256()
    for tensor in model.state_dict().values():
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


def git(*args: str) -> str | None:
    """The output of `git ARGS` in this script's folder; None without git or a repository."""
    command = ["git", "-C", str(Path(__file__).parent), *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError:  # git is not installed
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit() -> str | None:
    """The commit this script belongs to, marked "-dirty" when tracked files were changed."""
    commit = git("rev-parse", "HEAD")
    if commit and git("status", "--porcelain", "--untracked-files=no"):
        return commit + "-dirty"
    return commit


def save(path: Path, **state: Any) -> None:
    """Write to a temporary file, then rename it: an interruption leaves no half checkpoint."""
    partial = path.with_name(path.name + ".partial")
    torch.save(state, partial)
    partial.replace(path)


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


def train(
    args: argparse.Namespace,
    device: torch.device,
    rank: int = 0,
    world_size: int = 1,
    checkpoint: dict[str, Any] | None = None,
    stop: StopSignals | None = None,
) -> dict[str, Any]:
    """Minibatch SGD, data parallel across the process group if there is one; return the record.

    Process 0 prints the loss and accuracy on the whole data before training and after each
    epoch, saves the checkpoint, and writes the record. A signal in `stop` ends training at
    the next step boundary with StoppedError, once process 0 saved where it stopped.
    """
    start_time = time.perf_counter()
    points, labels = make_blobs(
        args.samples, FEATURES, CLASSES, torch.Generator().manual_seed(args.seed)
    )
    data = TensorDataset(points, labels)
    # The same permutation of the data in every process; process r takes its items r, r+N, ...,
    # so the k-th local batches of all processes together make the k-th global batch.
    sampler: DistributedSampler[tuple[torch.Tensor, ...]]
    sampler = DistributedSampler(data, world_size, rank, seed=args.seed, drop_last=True)
    local_batch = args.batch_size // world_size
    steps_per_epoch = len(sampler) // local_batch
    points, labels = points.to(device), labels.to(device)
    torch.manual_seed(args.seed)
    model = torch.nn.Linear(FEATURES, CLASSES).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    # On the whole data, before training and after each epoch.
    losses: list[float] = []
    accuracies: list[float] = []
    # Where training goes on: `batch` batches of `epoch` are done. Each start, in metrics.json.
    position = {"epoch": 1, "batch": 0}
    starts: list[dict[str, Any]] = []
    this_start: dict[str, Any] = {
        "time": now(),
        "restart_count": int(os.environ.get("SLURM_RESTART_COUNT", "0")),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "world_size": world_size,
        "resumed_from": None,
        "stopped": None,
    }

    def where(epoch: int, batch: int) -> dict[str, int]:
        return {"epoch": epoch, "batch": batch, "step": (epoch - 1) * steps_per_epoch + batch}

    def save_checkpoint(epoch: int, batch: int) -> None:
        """Process 0: the state after `batch` batches of `epoch`, and the run's starts so far."""
        if args.output:
            save(
                args.output / CHECKPOINT,
                model=model.state_dict(),
                optimizer=optimizer.state_dict(),
                position={"epoch": epoch, "batch": batch},
                losses=losses,
                accuracies=accuracies,
                arguments=arguments(args),
                starts=[*starts, this_start],
                slurm_job_id=os.environ.get("SLURM_JOB_ID"),  # whose run this is
            )

    def end_of_epoch(epoch: int) -> None:
        """Process 0: evaluate on the whole data, save the checkpoint, then report."""
        with torch.no_grad():
            logits = model(points)
            loss = cross_entropy(logits, labels).item()
            accuracy = (softmax(logits).argmax(dim=-1) == labels).float().mean().item()
        losses.append(loss)
        accuracies.append(accuracy)
        save_checkpoint(epoch + 1, 0)
        report = f"epoch {epoch:3d}/{args.epochs}  loss {loss:.4f}  accuracy {accuracy:.3f}"
        print(report, flush=True)  # once saved: a reported epoch can be resumed

    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        losses.extend(checkpoint["losses"])
        accuracies.extend(checkpoint["accuracies"])
        starts.extend(checkpoint["starts"])
        position = checkpoint["position"]
        this_start["resumed_from"] = where(position["epoch"], position["batch"])
        if rank == 0:
            at = this_start["resumed_from"]
            print(f"resuming {args.output} at epoch {at['epoch']}, batch {at['batch']}", flush=True)
    elif rank == 0:
        end_of_epoch(0)
    # Averages the gradients across processes during backward(); one process needs no wrapper.
    parallel = dist.is_initialized()
    ids = [device] if device.type == "cuda" else None
    step_model = DistributedDataParallel(model, device_ids=ids) if parallel else model

    for epoch in range(position["epoch"], args.epochs + 1):
        sampler.set_epoch(epoch)
        # This process's items in this epoch's order, less the batches taken before a stop.
        done = position["batch"] if epoch == position["epoch"] else 0
        order = list(sampler)[done * local_batch :]
        loader = DataLoader(data, local_batch, sampler=order, drop_last=True)
        for batch, (batch_points, batch_labels) in enumerate(loader, start=done + 1):
            loss = cross_entropy(step_model(batch_points.to(device)), batch_labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            number = stop.agreed(device) if stop else 0
            if number:
                name = signal.Signals(number).name
                this_start["stopped"] = {"signal": name, "time": now(), **where(epoch, batch)}
                if rank == 0:
                    save_checkpoint(epoch, batch)
                    print(f"stopped by {name} at epoch {epoch}, batch {batch}: saved", flush=True)
                raise StoppedError(number)
        if rank == 0:
            end_of_epoch(epoch)

    return {
        "final_loss": losses[-1] if losses else None,
        "final_accuracy": accuracies[-1] if accuracies else None,
        "losses": losses,
        "accuracies": accuracies,
        "parameters_sha256": checksum(model),
        "world_size": world_size,
        "seed": args.seed,
        "git_commit": git_commit(),
        "torch_version": torch.__version__,
        "numpy_version": importlib.metadata.version("numpy"),
        "arguments": arguments(args),
        "starts": [*starts, this_start],
        "seconds": time.perf_counter() - start_time,  # of the last start
    }


def restarted_jobs_checkpoint(args: argparse.Namespace) -> dict[str, Any] | None:
    """The checkpoint in --output if Slurm started this job again (requeued after a preemption,
    a node failure, `scontrol requeue`, or its time-limit warning: SLURM_RESTART_COUNT > 0) and
    this same job saved it; else None. A job's first start never takes another run's."""
    restarted = int(os.environ.get("SLURM_RESTART_COUNT", "0")) > 0
    if args.resume or not restarted or not args.output or not (args.output / CHECKPOINT).exists():
        return None
    saved: dict[str, Any] = torch.load(
        args.output / CHECKPOINT, map_location="cpu", weights_only=True
    )
    return saved if saved.get("slurm_job_id") == os.environ.get("SLURM_JOB_ID") else None


def main(argv: list[str] | None = None) -> None:
    """Check the command line, join the process group when started in several processes, train."""
    parser, args = parse_arguments(argv)
    # Set by torchrun, or by scripts/slurm/train.sbatch; absent in a plain `python` run.
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))

    def fail(message: str) -> NoReturn:
        if rank == 0:  # one message, not one per process
            parser.error(message)
        # The others leave quietly: torchrun and srun stop every process at the first failure,
        # which must be process 0's, or its message could be cut off before it is printed.
        sys.exit(0)

    checkpoint = restarted_jobs_checkpoint(args)
    args.resume = args.resume or checkpoint is not None
    problem = problem_with(args, world_size)
    if problem:
        fail(problem)
    if args.resume:
        if checkpoint is None:
            checkpoint = torch.load(args.output / CHECKPOINT, map_location="cpu", weights_only=True)
        problem = changed_since(checkpoint, args)
        if problem:
            fail(problem)
    if args.output:
        args.output.mkdir(parents=True, exist_ok=True)
    if args.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed by cuBLAS
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False

    device = torch.device(args.device)
    if args.device == "cuda":  # no index given: one GPU per process on the node
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
    if device.type == "cuda":
        torch.cuda.set_device(device)
    # A signal after the last step is recorded and changes nothing: the run ends as it would.
    with StopSignals() as stop:
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        try:
            record = train(args, device, rank, world_size, checkpoint, stop)
        except StoppedError as stopped:
            leave_together()  # after process 0 saved the checkpoint
            sys.exit(stopped.exit_status)
        leave_together()
        if rank == 0 and args.output:
            path = args.output / RECORD
            path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
            print(f"wrote {path}")


def leave_together() -> None:
    """Close the process group in every process at once, only after success or a stop (on an
    error torchrun stops the others): a process that closed its connections while process 0
    still saved a checkpoint made it abort at exit."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
    for number in EXIT_STATUS:  # nor while Python exits: a job finished is not to be requeued
        signal.signal(number, signal.SIG_IGN)
