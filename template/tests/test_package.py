"""The package as a whole: what it exports, and that NumPy and PyTorch users never need JAX."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
import torch

PACKAGE = "{{ cookiecutter.package_name }}"


def test_exports_public_functions() -> None:
    package = importlib.import_module(PACKAGE)
    assert package.__all__ == sorted(package.__all__)
    for name in package.__all__:
        assert callable(getattr(package, name)), name


def test_never_imports_jax_for_numpy_and_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fresh import of the package, in a world where `import jax` fails (None in sys.modules),
    # then every function on NumPy arrays and PyTorch tensors: none of it may touch JAX.
    for name in list(sys.modules):
        if name.partition(".")[0] in {"jax", "jaxlib", PACKAGE}:
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "jax", None)
    package = importlib.import_module(PACKAGE)
    logits, labels = np.zeros((2, 3)), np.array([0, 2])
    package.softmax(logits)
    package.cross_entropy(logits, labels)
    package.softmax(torch.from_numpy(logits))
    package.cross_entropy(torch.from_numpy(logits), torch.from_numpy(labels))
