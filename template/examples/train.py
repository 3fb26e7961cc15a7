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
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from {{ cookiecutter.package_name }} import cross_entropy, softmax

FEATURES, CLASSES = 8, 4
CHECKPOINT, RECORD = "checkpoint.pt", "metrics.json"
# They decide every step of a run: resuming with other values would train another model.
SAME_ON_RESUME = ("seed", "lr", "batch_size", "samples")


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


def train(
    args: argparse.Namespace,
    device: torch.device,
    rank: int = 0,
    world_size: int = 1,
    checkpoint: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Minibatch SGD, data parallel across the process group if there is one; return the record.

    Process 0 prints the loss and accuracy on the whole data before training and after each
    epoch, saves the checkpoint, and writes the record.
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
    loader = DataLoader(data, args.batch_size // world_size, sampler=sampler, drop_last=True)
    points, labels = points.to(device), labels.to(device)
    torch.manual_seed(args.seed)
    model = torch.nn.Linear(FEATURES, CLASSES).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    # On the whole data, before training and after each epoch.
    losses: list[float] = []
    accuracies: list[float] = []

    def end_of_epoch(epoch: int) -> None:
        """Process 0: evaluate on the whole data, save the checkpoint, then report."""
        with torch.no_grad():
            logits = model(points)
            loss = cross_entropy(logits, labels).item()
            accuracy = (softmax(logits).argmax(dim=-1) == labels).float().mean().item()
        losses.append(loss)
        accuracies.append(accuracy)
        if args.output:
            save(
                args.output / CHECKPOINT,
                model=model.state_dict(),
                optimizer=optimizer.state_dict(),
                epoch=epoch,
                losses=losses,
                accuracies=accuracies,
                arguments=arguments(args),
            )
        report = f"epoch {epoch:3d}/{args.epochs}  loss {loss:.4f}  accuracy {accuracy:.3f}"
        print(report, flush=True)  # once saved: a reported epoch can be resumed

    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        losses.extend(checkpoint["losses"])
        accuracies.extend(checkpoint["accuracies"])
        if rank == 0:
            print(f"resuming {args.output} after epoch {checkpoint['epoch']}", flush=True)
    elif rank == 0:
        end_of_epoch(0)
    first_epoch = checkpoint["epoch"] + 1 if checkpoint else 1
    # Averages the gradients across processes during backward(); one process needs no wrapper.
    parallel = dist.is_initialized()
    ids = [device] if device.type == "cuda" else None
    step_model = DistributedDataParallel(model, device_ids=ids) if parallel else model

    for epoch in range(first_epoch, args.epochs + 1):
        sampler.set_epoch(epoch)
        for batch_points, batch_labels in loader:
            loss = cross_entropy(step_model(batch_points.to(device)), batch_labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
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
        "resumed_after_epoch": first_epoch - 1 if checkpoint is not None else None,
        "seconds": time.perf_counter() - start_time,
    }


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

    problem = problem_with(args, world_size)
    if problem:
        fail(problem)
    checkpoint = None
    if args.resume:
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
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    record = train(args, device, rank, world_size, checkpoint)
    if dist.is_initialized():
        # Together, and only after success (on an error torchrun stops the others): a process that
        # closed its connections while process 0 still saved the last epoch made it abort at exit.
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0 and args.output:
        path = args.output / RECORD
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
