"""Triton as a backend, where the repo's pyproject.toml has a ``triton`` extra.

A Triton port takes and returns PyTorch tensors, so its targets make tensors as PyTorch's do;
what differs is the function they run: ``_<name>_triton`` itself (in the algorithm's module, or
its ``triton_impl.py``), since the public function sends it CUDA tensors only. On the CPU it runs
in Triton's interpreter, which needs ``TRITON_INTERPRET=1`` before triton is imported: the plugin
sets it in a run without CUDA (`interpret_without_cuda`).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import tomllib

import torch

from parity_tools.repo import repo_root

from .core import Function


def uses_triton() -> bool:
    """Whether this repo has Triton as a backend: its pyproject.toml declares a ``triton`` extra."""
    pyproject = repo_root() / "pyproject.toml"
    if not pyproject.is_file():
        return False
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get(
        "optional-dependencies", {}
    )
    return "triton" in extras


def interpret_without_cuda() -> None:
    """Run Triton's kernels in its interpreter, on CPU tensors, where there is no CUDA device
    and triton is not imported yet (a value already set is kept)."""
    if "triton" not in sys.modules and not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def interpreting() -> bool:
    """Whether Triton's kernels run in its interpreter (on CPU tensors)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def triton_port(function: Function) -> Function:
    """``_<name>_triton`` of the public `function`, called as `function` is: by the public
    function's name, with its defaults for the parameters left out."""
    from .backends import with_defaults

    name = f"_{function.__name__}_triton"
    module = sys.modules[function.__module__]
    if not hasattr(module, name) and function.__module__.endswith(".api"):
        module = importlib.import_module(function.__module__.removesuffix("api") + "triton_impl")
    port: Function = getattr(module, name)

    @functools.wraps(function)
    def called_as_public(*arguments: object, **parameters: object) -> object:
        return port(*arguments, **with_defaults(function, parameters))

    return called_as_public
