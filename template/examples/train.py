"""Train softmax regression on synthetic data with the PyTorch implementations and autograd.

The model is a linear map from features to class scores (logits). `cross_entropy` is the loss
and `softmax` turns scores into probabilities: given tensors, this package's public functions
run their PyTorch implementations, which the tests check against the NumPy references.

    python examples/train.py                  # on the CPU, in a few seconds
    python examples/train.py --device cuda    # on a GPU
"""

from __future__ import annotations

import argparse

import torch

from {{ cookiecutter.package_name }} import cross_entropy, softmax


def make_blobs(
    samples: int, features: int, classes: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One Gaussian cluster of unit variance per class, around random centres."""
    centres = 3.0 * torch.randn(classes, features, generator=generator)
    labels = torch.randint(classes, (samples,), generator=generator)
    points = centres[labels] + torch.randn(samples, features, generator=generator)
    return points, labels


def train(
    epochs: int = 20,
    device: str = "cpu",
    seed: int = 0,
    learning_rate: float = 0.5,
    samples: int = 2048,
    features: int = 8,
    classes: int = 4,
    batch_size: int = 128,
) -> list[float]:
    """Train with minibatch SGD; print and return the loss before training and after each epoch."""
    generator = torch.Generator().manual_seed(seed)
    points, labels = make_blobs(samples, features, classes, generator)
    points, labels = points.to(device), labels.to(device)
    weights = torch.zeros(features, classes, device=device, requires_grad=True)
    bias = torch.zeros(classes, device=device, requires_grad=True)
    optimizer = torch.optim.SGD([weights, bias], lr=learning_rate)

    def evaluate(epoch: int) -> float:
        with torch.no_grad():
            logits = points @ weights + bias
            loss = cross_entropy(logits, labels).item()
            predictions = softmax(logits).argmax(dim=-1)
            accuracy = (predictions == labels).float().mean().item()
        print(f"epoch {epoch:3d}/{epochs}  loss {loss:.4f}  accuracy {accuracy:.3f}", flush=True)
        return loss

    losses = [evaluate(0)]
    for epoch in range(1, epochs + 1):
        order = torch.randperm(samples, generator=generator).to(device)
        for start in range(0, samples, batch_size):
            batch = order[start : start + batch_size]
            loss = cross_entropy(points[batch] @ weights + bias, labels[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses.append(evaluate(epoch))
    return losses


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, mps... (default: cpu)")
    parser.add_argument("--epochs", type=int, default=20, help="passes over the data (default: 20)")
    parser.add_argument("--lr", type=float, default=0.5, help="learning rate (default: 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and batches")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device found (torch.cuda.is_available() is False)")
    if device.type == "mps" and not torch.backends.mps.is_available():
        parser.error("--device mps: no MPS device found (torch.backends.mps.is_available())")
    train(epochs=args.epochs, device=args.device, seed=args.seed, learning_rate=args.lr)


if __name__ == "__main__":
    main()
