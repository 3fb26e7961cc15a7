"""The generated repos' own benchmark, `nox -s bench`: the wall time of its quick profile.

In each generated repo, `nox --no-venv --no-install -s bench` runs with this interpreter (numpy,
torch, jax, matplotlib) and the repo's src/ on PYTHONPATH: the quick profile over the two worked
examples, as a user starts it on a machine where the environment exists (installing one is the
cold start's measure). First with an empty torch.compile cache, as on a new machine, then again
with the cache that run filled.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from benchmarks.report import Target, number, spread, table
from benchmarks.timing import Command, Stats, timed

# The target: the quick profile finishes in about a minute on a 2-core CPU machine.
QUICK_PROFILE_SECONDS = 60.0


def time_bench(repo: Path, cache: Path, warm_runs: int) -> dict[str, Any]:
    """Seconds of `nox -s bench` in `repo`: once with the compile cache `cache` empty, then
    `warm_runs` times with it filled; and what the last run timed."""
    interpreter = str(Path(sys.executable).parent)
    env = {
        "PATH": os.pathsep.join([interpreter, os.environ.get("PATH", "")]),  # nox runs `python`
        "PYTHONPATH": str(repo / "src"),
        "TORCHINDUCTOR_CACHE_DIR": str(cache),
    }
    command: Command = [sys.executable, "-m", "nox", "--no-venv", "--no-install", "-s", "bench"]
    cold, _ = timed(command, cwd=repo, env=env)
    warm = [timed(command, cwd=repo, env=env)[0] for _ in range(warm_runs)]
    written = json.loads((repo / "bench-results" / "results.json").read_text(encoding="utf-8"))
    return {
        "cold_seconds": cold,
        "warm_seconds": Stats.of(warm).as_dict() if warm else None,
        "timing_seconds": written["seconds"],  # the script's own measurements, imports excluded
        "functions": written["functions"],
        "rows": len(written["rows"]),
    }


def targets(results: dict[str, Any]) -> list[Target]:
    """The quick profile's target, met by the slowest combination with an empty cache."""
    if "bench" not in results:
        return []
    runs = results["bench"]
    slowest = max(runs, key=lambda combination: runs[combination]["cold_seconds"])
    name = "`nox -s bench`, quick profile, empty compile cache (slowest combination)"
    return [Target(name, QUICK_PROFILE_SECONDS, "s", runs[slowest]["cold_seconds"], slowest)]


def markdown(results: dict[str, Any]) -> str:
    """The section of the report, with its target's verdict."""
    if "bench" not in results:
        return ""
    rows = [
        (
            combination,
            ", ".join(run["functions"]),
            run["rows"],
            number(run["cold_seconds"], "s"),
            spread(run["warm_seconds"]) if run["warm_seconds"] else "not run",
            number(run["timing_seconds"], "s"),
        )
        for combination, run in results["bench"].items()
    ]
    header = ["Combination", "Functions", "Rows", "Empty cache", "Warm cache", "Timing loop"]
    lines = [
        "",
        "## `nox --no-venv --no-install -s bench` in a generated repo (quick profile)",
        "",
        "Whole-process wall time; the timing loop is the script's measurements alone (no imports).",
        "",
        *table(header, rows),
    ]
    lines += [f"Target: {target.name}: {target.verdict()}." for target in targets(results)]
    return "\n".join(lines) + "\n"
