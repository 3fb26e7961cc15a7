"""Triton as a backend, where the repo's pyproject.toml has a ``triton`` extra.

A Triton port takes and returns PyTorch tensors, so its targets make tensors as PyTorch's do;
what differs is the function they run: ``_<name>_triton`` itself (``Backend.port``), since the
public function sends it CUDA tensors only. On the CPU it runs in Triton's interpreter, which
needs ``TRITON_INTERPRET=1`` before triton is imported: the plugin sets it in a run without
CUDA (`interpret_without_cuda`).
"""

from __future__ import annotations

import os
import sys

import torch

from .repo import repo_extras


def uses_triton() -> bool:
    """Whether this repo has Triton as a backend: its pyproject.toml declares a ``triton`` extra."""
    return "triton" in repo_extras()


def interpret_without_cuda() -> None:
    """Run Triton's kernels in its interpreter, on CPU tensors, where there is no CUDA device
    and triton is not imported yet (a value already set is kept)."""
    if "triton" not in sys.modules and not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def interpreting() -> bool:
    """Whether Triton's kernels run in its interpreter (on CPU tensors)."""
    return os.environ.get("TRITON_INTERPRET") == "1"
