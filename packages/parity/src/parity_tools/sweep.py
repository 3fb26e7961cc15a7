"""Run a sweep of examples/train.py: a Slurm job array, or one run after another here.

A sweep file holds one run's arguments per line (`#` starts a comment), for instance
sweeps/example.txt: two learning rates, three seeds each. Write a grid with a shell loop:
`for lr in 0.1 0.5; do for seed in 0 1 2; do echo "--lr $lr --seed $seed"; done; done`.

    parity sweep run sweeps/example.txt
    parity sweep submit sweeps/example.txt --max-parallel 2 -- --ntasks=2 --time=30
    parity results

Before anything runs, every line goes through train.py's own checks: its parser, then the rules
between options (`problem_with`) for the number of processes each run will have (the sbatch
options' tasks, 1 here). The sweep's list of runs goes to runs/sweeps/<name>-<UTC time>.json:
each run's line, its arguments (train.py's defaults filled in) and its folder, runs/<array
job>_<task>/ under Slurm (runs/<name>-<time>_<index>/ here). Slurm's array schedules the runs
(`sbatch --array=0-N%M`; M is --max-parallel); each task of scripts/slurm/train.sbatch reads its
arguments from that list (`arguments`, below). From the list, parity results makes the
sweep's table and knows which runs failed or never ran.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from .repo import repo_root

ROOT = repo_root()
TRAIN = ROOT / "examples" / "train.py"
SBATCH = ROOT / "scripts" / "slurm" / "train.sbatch"
RUNS = Path("runs")
# The sweep chooses these for every run.
CHOSEN_BY_THE_SWEEP = ("--output", "--resume")


def fail(message: str) -> NoReturn:
    """Stop with `message` on stderr and exit status 1."""
    sys.exit(f"parity sweep: {message}")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line; what follows `--` goes to sbatch as it is (args.sbatch)."""
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    ours, sbatch = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    usage = "%(prog)s SWEEP [--max-parallel N] [-- SBATCH OPTIONS, e.g. --ntasks=2 --time=30]"
    submit = commands.add_parser(
        "submit", help="submit the sweep as a Slurm job array", usage=usage
    )
    submit.add_argument("sweep", type=Path, help="the sweep file, e.g. sweeps/example.txt")
    submit.add_argument(
        "--max-parallel", type=int, help="at most this many runs at a time (default: Slurm's)"
    )
    run = commands.add_parser("run", help="run the sweep here, one run after another")
    run.add_argument("sweep", type=Path, help="the sweep file, e.g. sweeps/example.txt")
    show = commands.add_parser("arguments", help="one run's arguments, one a line (train.sbatch)")
    show.add_argument("runs", type=Path, help="the sweep's list of runs, runs/sweeps/<id>.json")
    show.add_argument("index", type=int, help="the run's index (SLURM_ARRAY_TASK_ID)")
    args = parser.parse_args(ours)
    if getattr(args, "max_parallel", None) is not None and args.max_parallel < 1:
        parser.error(f"--max-parallel {args.max_parallel}: give 1 or more")
    if sbatch and args.command != "submit":
        parser.error(
            f"options after `--` go to sbatch: only `submit` takes them, not {args.command}"
        )
    args.sbatch = sbatch
    return args


def world_size(sbatch: list[str]) -> int:
    """The processes of a job with these sbatch options: one per task (1 when they say none)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("-n", "--ntasks", type=int)
    parser.add_argument("-N", "--nodes", default="1")  # a count, or a range such as 2-4
    parser.add_argument("--ntasks-per-node", type=int)
    known, _ = parser.parse_known_args(sbatch)
    if known.ntasks is not None:
        return int(known.ntasks)
    return int(known.nodes.split("-")[0]) * (known.ntasks_per_node or 1)


def read_sweep(path: Path) -> list[tuple[int, list[str]]]:
    """The runs of a sweep file: (line number, arguments) for each line that is not blank."""
    if not path.is_file():
        fail(f"no sweep file {path}: write one run's arguments per line")
    runs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as error:  # an unclosed quote
            fail(f"{path}, line {number}: {error}")
        if tokens:
            runs.append((number, tokens))
    if not runs:
        fail(f"{path} lists no run: write one run's arguments per line")
    return runs


def load_train() -> ModuleType:
    """The repo's examples/train.py as a module, for its checks (it imports torch and the
    repo's package)."""
    sys.path.insert(0, str(TRAIN.parent))
    return importlib.import_module("train")


def check(path: Path, runs: list[tuple[int, list[str]]], processes: int) -> list[dict[str, Any]]:
    """Each run's arguments as train.py would read them, defaults included; refuses what train.py
    would refuse in `processes` processes, what the sweep chooses itself, and a run listed twice."""
    train = load_train()
    checked: list[dict[str, Any]] = []
    for number, tokens in runs:
        where = f"{path}, line {number}"
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr):
                _, args = train.parse_arguments(tokens)
        except SystemExit:
            error = stderr.getvalue().strip().splitlines()[-1].partition("error: ")[2]
            fail(f"{where}: {error}")
        for option in CHOSEN_BY_THE_SWEEP:
            if vars(args)[option.removeprefix("--")] not in {None, False}:
                fail(f"{where}: remove {option}, the sweep gives each run its own folder")
        problem = train.problem_with(args, processes)
        if problem:
            tasks = f" (the sbatch options give {processes} tasks)" if processes > 1 else ""
            fail(f"{where}: {problem}{tasks}")
        arguments: dict[str, Any] = dict(vars(args))  # JSON as it is: no --output
        for earlier in checked:
            if earlier["arguments"] == arguments:
                fail(f"{where} repeats line {earlier['line']}: change its --seed")
        run = {"index": len(checked), "line": number, "argv": tokens, "arguments": arguments}
        checked.append(run)
    return checked


def write_runs(sweep: Path, runs: list[dict[str, Any]], slurm: bool) -> Path:
    """The sweep's list of runs, runs/sweeps/<name>-<UTC time>.json; its folders are not set yet."""
    now = dt.datetime.now(dt.UTC)
    sweep_id = f"{sweep.stem}-{now:%Y%m%d-%H%M%S}"
    listing = RUNS / "sweeps" / f"{sweep_id}.json"
    listing.parent.mkdir(parents=True, exist_ok=True)
    if listing.exists():
        fail(f"{listing} exists: wait a second and submit again")
    record = {"sweep": str(sweep), "id": sweep_id, "created": now.isoformat(), "slurm": slurm}
    save(listing, {**record, "array_job": None, "runs": runs})
    return listing


def save(path: Path, record: dict[str, Any]) -> None:
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def submit(args: argparse.Namespace) -> None:
    """`sbatch --array` the sweep; each task runs one line through scripts/slurm/train.sbatch."""
    runs = check(args.sweep, read_sweep(args.sweep), world_size(args.sbatch))
    listing = write_runs(args.sweep, runs, slurm=True)
    limit = f"%{args.max_parallel}" if args.max_parallel else ""
    array = f"--array=0-{len(runs) - 1}{limit}"
    command = ["sbatch", "--parsable", array, *args.sbatch, str(SBATCH)]
    # Each task takes its rendezvous port from its own job id: one port for all would collide.
    env = {key: value for key, value in os.environ.items() if key != "MASTER_PORT"}
    env["SWEEP_RUNS"] = str(listing)
    submitted = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if submitted.returncode != 0:
        listing.unlink()
        fail(f"`{shlex.join(command)}` failed: {submitted.stderr.strip()}")
    array_job = submitted.stdout.strip().split(";")[0]
    for run in runs:
        run["output"] = str(RUNS / f"{array_job}_{run['index']}")
    record = json.loads(listing.read_text(encoding="utf-8"))
    save(listing, {**record, "array_job": array_job, "runs": runs})
    print(f"Submitted {args.sweep} as job array {array_job}: {len(runs)} runs, in {listing}")
    print(f"Runs: runs/{array_job}_<task>/; logs: slurm-{array_job}_<task>.out; `squeue --me`")
    print("Once they are done: parity results")


def run_here(args: argparse.Namespace) -> None:
    """Every run, one after another, with this Python; a failed run does not stop the others."""
    runs = check(args.sweep, read_sweep(args.sweep), processes=1)
    listing = write_runs(args.sweep, runs, slurm=False)
    sweep_id = listing.stem
    for run in runs:
        run["output"] = str(RUNS / f"{sweep_id}_{run['index']}")
    record = json.loads(listing.read_text(encoding="utf-8"))
    save(listing, {**record, "runs": runs})
    failed = []
    for run in runs:
        print(f"--- run {run['index'] + 1} of {len(runs)}: {shlex.join(run['argv'])}", flush=True)
        Path(run["output"]).mkdir(parents=True)  # started: as train.sbatch marks it
        command = [sys.executable, str(TRAIN), *run["argv"], "--output", run["output"]]
        if subprocess.run(command, check=False).returncode != 0:
            failed.append(run["output"])
    print(f"{len(runs) - len(failed)} of {len(runs)} runs done, listed in {listing}")
    if failed:
        fail(f"failed: {', '.join(failed)}")


def show_arguments(args: argparse.Namespace) -> None:
    """One run's arguments, one a line, as train.sbatch reads them into an array."""
    runs = json.loads(args.runs.read_text(encoding="utf-8"))["runs"]
    if not 0 <= args.index < len(runs):
        fail(f"{args.runs} has runs 0 to {len(runs) - 1}, not {args.index}")
    print("\n".join(runs[args.index]["argv"]))


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    if Path.cwd().resolve() != ROOT:  # the runs' folders, and Slurm's logs, go to the repo's root
        fail(f"run it from the repo's root, {ROOT}")
    {"submit": submit, "run": run_here, "arguments": show_arguments}[args.command](args)
