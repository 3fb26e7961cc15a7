"""Running the generated training example, comparing runs, and reading a sweep's results: shared
by the training, Slurm, sweep and documented-command tests."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.render import BIN, TOOLS, Combination, Render, run

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


def run_cases(repo: Path, cases: Path) -> None:
    """Run the tests of `cases` (a file of this folder, named ``*_cases.py``) in `repo`, as
    tests/test_*.py there, with examples/ importable; fail with the output unless all pass."""
    test = repo / "tests" / f"test_{cases.stem.removesuffix('_cases')}.py"
    shutil.copy(cases, test)
    paths = os.pathsep.join(str(repo / folder) for folder in ("src", "examples"))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(test.relative_to(repo))]
    env = environment(repo) | {"PYTHONPATH": paths}
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout.splitlines()[-1], result.stdout


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


def results(repo: Path, *arguments: str) -> tuple[Path, list[dict[str, str]]]:
    """`parity results ARGUMENTS`: the folder of its (only) table and the table's CSV rows."""
    shutil.rmtree(repo / "results", ignore_errors=True)
    run([*TOOLS, "results", *arguments], cwd=repo, env=environment(repo))
    (folder,) = (repo / "results").iterdir()
    for name in ("table.md", "table.tex", "curves.png", "curves.pdf", "final.png", "final.pdf"):
        assert (folder / name).stat().st_size > 0, name
    with (folder / "table.csv").open(encoding="utf-8") as table:
        return folder, list(csv.DictReader(table))


def listing_of(repo: Path) -> tuple[Path, list[dict[str, Any]]]:
    (listing,) = (repo / "runs/sweeps").glob("*.json")
    runs: list[dict[str, Any]] = json.loads(listing.read_text(encoding="utf-8"))["runs"]
    return listing, runs


def check_row(row: dict[str, str], records: list[dict[str, Any]], listed: int, not_finished: str) -> None:
    """A row of the table against the runs it stands for."""
    assert (int(row["n"]), int(row["listed"])) == (len(records), listed)
    for metric in ("loss", "held_out_loss", "held_out_accuracy"):
        finals = [entry["final"][metric] for entry in records]
        assert float(row[f"{metric}_mean"]) == pytest.approx(statistics.fmean(finals), rel=1e-12)
        assert float(row[f"{metric}_std"]) == pytest.approx(statistics.stdev(finals), rel=1e-12)
    assert row["seeds"] == " ".join(str(entry["arguments"]["seed"]) for entry in records)
    assert row["not_finished"] == not_finished


def assert_compiles(table: Path) -> None:
    """The LaTeX table, `\\input` into a document, goes through pdflatex (where it is installed)."""
    pdflatex = shutil.which("pdflatex")
    kpsewhich = shutil.which("kpsewhich")
    booktabs = kpsewhich and subprocess.run([kpsewhich, "booktabs.sty"], capture_output=True).returncode == 0
    if pdflatex is None or not booktabs:
        pytest.skip("Requires: pdflatex and booktabs (Debian's texlive-latex-base, texlive-latex-recommended)")
    document = table.with_name("paper.tex")
    preamble = "\\documentclass{article}\\usepackage{booktabs}\\begin{document}"
    document.write_text(f"{preamble}\\input{{{table.name}}}\\end{{document}}\n", encoding="utf-8")
    command = [pdflatex, "-interaction=nonstopmode", "-halt-on-error", document.name]
    done = subprocess.run(command, cwd=table.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
