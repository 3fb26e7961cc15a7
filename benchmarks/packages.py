"""Measurements of a generated package in this interpreter, its repo's src/ on PYTHONPATH: import
time, and the probes of probe.py (dispatch overhead, torch.compile and jax.jit) in a subprocess."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from benchmarks.timing import Command, Stats, run, timed

PROBE = Path(__file__).with_name("probe.py")
BASELINE = "numpy, torch"
# A line of `python -X importtime`: "import time:  self [us] | cumulative | imported package".
IMPORTTIME_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def source_path(repo: Path) -> dict[str, str]:
    """The environment variables that make a generated repo's package importable here."""
    return {"PYTHONPATH": str(repo / "src")}


def time_imports(repo: Path, package: str, times: int) -> dict[str, Stats]:
    """Whole-process times of `python -c "import <package>"` and of `import numpy, torch`, in
    alternating pairs (so that drift of the machine hits both alike), after one untimed run of
    each that warms the file cache; with the median of the differences within pairs."""
    env = source_path(repo)
    commands = {
        "package": [sys.executable, "-c", f"import {package}"],
        "baseline": [sys.executable, "-c", f"import {BASELINE}"],
    }
    for command in commands.values():
        run(command, env=env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for pair in range(times):
        for name in sorted(commands, reverse=bool(pair % 2)):
            seconds, _ = timed(commands[name], env=env)
            samples[name].append(seconds)
    differences = [p - b for p, b in zip(samples["package"], samples["baseline"], strict=True)]
    return {name: Stats.of(values) for name, values in {**samples, "difference": differences}.items()}


def own_import_ms(repo: Path, package: str) -> float:
    """Milliseconds that importing the package's own modules takes, numpy and torch not counted
    (the sum of their self times in `python -X importtime`)."""
    result = run([sys.executable, "-X", "importtime", "-c", f"import {package}"], env=source_path(repo))
    self_us = 0
    for line in result.stderr.splitlines():
        match = IMPORTTIME_LINE.match(line)
        if match and (match[4] == package or match[4].startswith(package + ".")):
            self_us += int(match[1])
    return self_us / 1000


def imports_jax(repo: Path, package: str) -> bool:
    """Whether `import <package>` imports JAX (it must not: JAX is optional and slow to import)."""
    code = f"import sys, {package}; print('jax' in sys.modules)"
    answer = run([sys.executable, "-c", code], env=source_path(repo)).stdout.strip()
    return {"True": True, "False": False}[answer]


def import_report(repo: Path, package: str, times: int) -> dict[str, Any]:
    """Import time of the package, what of it is the package's own, and whether JAX came along."""
    return {
        **{f"{name}_seconds": stats.as_dict() for name, stats in time_imports(repo, package, times).items()},
        "own_modules_ms": own_import_ms(repo, package),
        "jax_imported": imports_jax(repo, package),
    }


def probe(what: str, repo: Path, package: str, jax: bool, *options: str) -> dict[str, Any]:
    """Run probe.py's `what` ("dispatch" or "compile") on the package of `repo`; its report."""
    command: Command = [sys.executable, PROBE, what, "--package", package, *(["--jax"] if jax else []), *options]
    report: dict[str, Any] = json.loads(run(command, env=source_path(repo)).stdout)
    return report
