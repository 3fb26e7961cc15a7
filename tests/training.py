"""Running the generated training example, and comparing runs: shared by the training, Slurm and
sweep tests."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch

from tests.render import BIN, Combination, Render, run

# Both layouts, and with and without JAX, in two renders.
LAYOUTS = [Combination("single", False), Combination("split", True)]
# Stated in the generated examples/train.py: N processes against one, float32 sums reordered.
RTOL, ATOL = 1e-5, 1e-6
# torchrun's logs in the repo's copy (the commands run there), not in the temporary folder, where
# torchrun leaves a folder for each run.
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--log-dir=torchrun-logs"]


def copy_of(rendered: Render, combination: Combination, folder: Path) -> Path:
    """A private copy of a render (cookiecutter's), to run and write in."""
    return Path(shutil.copytree(rendered("cookiecutter", combination), folder))


def environment(repo: Path) -> dict[str, str]:
    """The generated package importable (not installed), and this venv's tools first on PATH."""
    return {**os.environ, "PYTHONPATH": str(repo / "src"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def train(repo: Path, *arguments: str, processes: int = 0) -> tuple[str, float]:
    """Run examples/train.py in `repo`: as `python` (0 processes) or through torchrun; its output
    and wall time."""
    launcher = [*TORCHRUN, f"--nproc_per_node={processes}"] if processes else [sys.executable]
    start = time.perf_counter()
    result = run([*launcher, "examples/train.py", *arguments], cwd=repo, env=environment(repo), timeout=600)
    return result.stdout, time.perf_counter() - start


def record(output: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((output / "metrics.json").read_text(encoding="utf-8"))
    return result


def parameters(output: Path) -> dict[str, torch.Tensor]:
    model: dict[str, torch.Tensor] = torch.load(output / "checkpoint.pt", weights_only=True)["model"]
    return model


def running(argument: str) -> list[str]:
    """The command lines of this machine's processes that contain `argument` (Linux)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):  # the process ended meanwhile
            command = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if argument in command:
                found.append(command)
    return found


def assert_same_run(actual: Path, expected: Path) -> None:
    """The two runs took the same steps: same losses and final parameters within the tolerance."""
    torch.testing.assert_close(record(actual)["history"], record(expected)["history"], rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(parameters(actual), parameters(expected), rtol=RTOL, atol=ATOL)
