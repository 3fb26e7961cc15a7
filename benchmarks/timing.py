"""Wall-clock timing of whole processes, and the statistics the tables report."""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

Command = Sequence[str | Path]


@dataclass(frozen=True)
class Stats:
    """Median, minimum and maximum of repeated measurements (seconds or nanoseconds)."""

    median: float
    min: float
    max: float
    runs: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        """The statistics of `samples` (at least one)."""
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class CommandError(RuntimeError):
    """A command the benchmark depends on failed; the message holds its whole output."""


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment, with a git identity (for commits and `copier update`) and
    `extra` on top."""
    env = dict(os.environ)
    for role in ("AUTHOR", "COMMITTER"):
        env.setdefault(f"GIT_{role}_NAME", "Benchmark")
        env.setdefault(f"GIT_{role}_EMAIL", "benchmark@example.org")
    env.update(extra or {})
    return env


def run(
    command: Command, cwd: Path | None = None, env: Mapping[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `command` to completion, capturing its output; with `check`, fail on a non-zero exit."""
    args = [str(arg) for arg in command]
    result = subprocess.run(args, cwd=cwd, env=environment(env), capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise CommandError(
            f"`{shlex.join(args)}` exited {result.returncode} in {cwd or Path.cwd()}\n"
            f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )
    return result


def timed(
    command: Command, cwd: Path | None = None, env: Mapping[str, str] | None = None, check: bool = True
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Seconds of wall-clock time that `command` takes as a whole process, and its result."""
    start = time.perf_counter()
    result = run(command, cwd=cwd, env=env, check=check)
    return time.perf_counter() - start, result


def repeat(
    command_for: Callable[[int], Command],
    times: int,
    cwd_for: Callable[[int], Path | None] = lambda _: None,
    env: Mapping[str, str] | None = None,
    before: Callable[[int], None] = lambda _: None,
) -> Stats:
    """Time `times` runs of a command; run `i` runs `command_for(i)` in `cwd_for(i)`, after
    `before(i)` (untimed) has prepared it."""
    samples = []
    for i in range(times):
        before(i)
        seconds, _ = timed(command_for(i), cwd=cwd_for(i), env=env)
        samples.append(seconds)
    return Stats.of(samples)
