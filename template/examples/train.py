"""Train softmax regression on synthetic data with this package's PyTorch implementations.

The model is a linear map from features to class scores (logits): `cross_entropy` is the loss and
`softmax` turns scores into probabilities. Given tensors, this package's public functions run
their PyTorch implementations, which the tests check against the NumPy references. Before
training and after every epoch, the run measures loss and accuracy on its training data and on
held-out data from the same clusters, never trained on.

    python examples/train.py --output runs/first
    python -m torch.distributed.run --standalone --nproc_per_node=2 examples/train.py
    python examples/train.py --output runs/first --resume --epochs 30

`--batch-size` is the global batch: each of N processes takes 1/N of every batch and
DistributedDataParallel averages their gradients, so N processes take the steps of one, up to
the order of float32 sums (rtol=1e-5, atol=1e-6). Stopping, resuming, Slurm
and what metrics.json records: examples/resumable.py.
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from {{ cookiecutter.package_name }} import cross_entropy, softmax

from resumable import Run, add_arguments, exit_now, ignore_stop_signals

FEATURES, CLASSES = 8, 4
HELD_OUT = 512  # samples drawn beside the training data, only evaluated on
# They decide every step of a run: resuming with other values would train another model.
SAME_ON_RESUME = ("seed", "lr", "batch_size", "samples")


def make_blobs(
    samples: int, features: int, classes: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One Gaussian cluster of unit variance per class, around random centres."""
    centres = 1.5 * torch.randn(classes, features, generator=generator)
    labels = torch.randint(classes, (samples,), generator=generator)
    points = centres[labels] + torch.randn(samples, features, generator=generator)
    return points, labels


def parse_arguments(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--epochs", type=int, default=20, help="passes over the data (default: 20)")
    parser.add_argument("--lr", type=float, default=0.5, help="learning rate (default: 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data, model and batches")
    parser.add_argument(
        "--batch-size", type=int, default=128, help="global batch, split across processes (128)"
    )
    parser.add_argument("--samples", type=int, default=2048, help="training samples (2048)")
    add_arguments(parser)  # --device, --output, --resume...: examples/resumable.py
    return parser, parser.parse_args(argv)


def problem_with(args: argparse.Namespace, world_size: int) -> str | None:
    """What is wrong with these options for `world_size` processes, if anything (`parity sweep`
    asks this of every line of a sweep before the first run)."""
    if args.epochs < 0:
        return f"--epochs {args.epochs}: give 0 or more"
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
    return None


@torch.no_grad()
def evaluate(
    model: torch.nn.Module, points: torch.Tensor, labels: torch.Tensor, prefix: str = ""
) -> dict[str, float]:
    """Mean cross-entropy and accuracy of the model on these points."""
    logits = model(points)
    accuracy = (softmax(logits).argmax(dim=-1) == labels).float().mean()
    return {
        f"{prefix}loss": cross_entropy(logits, labels).item(),
        f"{prefix}accuracy": accuracy.item(),
    }


def train(args: argparse.Namespace, run: Run) -> None:
    """Minibatch SGD, data parallel across the run's processes."""
    generator = torch.Generator().manual_seed(args.seed)
    points, labels = make_blobs(args.samples + HELD_OUT, FEATURES, CLASSES, generator)
    points, labels = points.to(run.device), labels.to(run.device)
    n = args.samples
    training, held_out = (points[:n], labels[:n]), (points[n:], labels[n:])
    data = TensorDataset(*training)
    # The same permutation of the data in every process; process r takes its items r, r+N, ...,
    # so the k-th local batches of all processes together make the k-th global batch.
    sampler: DistributedSampler[tuple[torch.Tensor, ...]]
    sampler = DistributedSampler(data, run.world_size, run.rank, seed=args.seed, drop_last=True)
    local_batch = args.batch_size // run.world_size
    torch.manual_seed(args.seed)
    model = torch.nn.Linear(FEATURES, CLASSES).to(run.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    step_model = run.prepare(model, optimizer, steps_per_epoch=len(sampler) // local_batch)

    for epoch in run.epochs(args.epochs):  # epoch 0: before training
        if epoch > 0:
            sampler.set_epoch(epoch)
            done = run.batches_done(epoch)  # taken before the run was stopped
            order = list(sampler)[done * local_batch :]
            loader = DataLoader(data, local_batch, sampler=order, drop_last=True)
            for batch, (batch_points, batch_labels) in enumerate(loader, start=done + 1):
                loss = cross_entropy(step_model(batch_points), batch_labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                run.step_done(epoch, batch)  # stops here on SIGTERM or SIGUSR1
        metrics = evaluate(model, *training) | evaluate(model, *held_out, "held_out_")
        run.end_epoch(epoch, metrics)
    run.finish(data={"samples": args.samples, "held_out": HELD_OUT})


def main(argv: list[str] | None = None) -> None:
    """Check the command line, join the process group when started in several processes, train."""
    parser, args = parse_arguments(argv)
    with Run(parser, args, problem_with, SAME_ON_RESUME) as run:
        train(args, run)


if __name__ == "__main__":
    ignore_stop_signals()  # what the run's handlers restore when it ends: a finished job goes on
    main()
    exit_now()
