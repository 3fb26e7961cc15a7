"""How close each port came, per algorithm, backend, dtype and device, summed over a test run
(plugin.py's hooks): a line per algorithm and backend at the end of the run, and on request
(``--parity-report=PATH``, or ``PARITY_REPORT=PATH``) a JSON file that the docs site's pages
read (parity_tools.ports).

Each comparison's worst error as a fraction of what was allowed there (1.0: at the limit), and
in units in the last place of the dtype where the allowance is mostly relative, is noted by
`assert_close` itself, where it measures the errors, and each capability a test exercised
(capabilities.py; ``strided_operands`` where the layouts were compared) as present, or absent
with the library's reason; a test's tally (`tallied`) keeps them among the test's user
properties, which this module reads from pytest's reports.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from .core import MEASURED
from .targets import Target

#: The user property that names a test's row: algorithm, backend, dtype, device.
ROW = "parity_row"
#: The report's format: a reader refuses another (parity_tools.ports).
FORMAT = 1
#: Whose versions the report records, where installed.
VERSIONS = ("numpy", "torch", "jax", "triton", "hypothesis", "parity")


def row_of(item: pytest.Item) -> tuple[str, str, str, str] | None:
    """The row a test counts in: its module's algorithm (``test_softmax.py``: softmax) and its
    target; None for a test without a target (of the reference alone)."""
    callspec = getattr(item, "callspec", None)
    target = callspec.params.get("target") if callspec is not None else None
    if not isinstance(target, Target):
        return None
    algorithm = item.path.stem.removeprefix("test_")
    return (algorithm, target.backend, target.dtype, target.device)


def new_row() -> dict[str, Any]:
    return {
        "calls_compared": 0,
        "elements": 0,
        "worst_fraction": 0.0,
        "worst_ulps": None,
        "passed": 0,
        "failed": 0,
        "skipped": {},
        "capabilities": {},
    }


def merged(states: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """Capabilities (core.note_capability's states) over several tests or rows: absent where
    any found it absent, else present."""
    found: dict[str, str] = {}
    for capabilities in states:
        for name, state in capabilities.items():
            if state.startswith("absent") or name not in found:
                found[name] = state
    return found


def lacked(capabilities: Mapping[str, str]) -> list[str]:
    """The names of the capabilities absent in `capabilities`, sorted."""
    return sorted(name for name, state in capabilities.items() if state.startswith("absent"))


class Rows:
    """The rows of a run, filled from pytest's reports (`pytest_runtest_logreport`)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties: Mapping[str, Any] = dict(report.user_properties)
        key = properties.get(ROW)
        if key is None:
            return
        row = self.rows.setdefault(tuple(key), new_row())
        if report.when == "call":
            measured = properties.get(MEASURED, {})
            row["calls_compared"] += measured.get("compared", 0)
            row["elements"] += measured.get("elements", 0)
            row["worst_fraction"] = max(row["worst_fraction"], measured.get("worst", 0.0))
            ulps = [u for u in (row["worst_ulps"], measured.get("ulps")) if u is not None]
            row["worst_ulps"] = max(ulps, default=None)
            row["capabilities"] = merged([row["capabilities"], measured.get("capabilities", {})])
        if report.skipped:
            reason = "expected failure (not written yet)" if hasattr(report, "wasxfail") else ""
            if not reason and isinstance(report.longrepr, tuple):
                reason = str(report.longrepr[2]).removeprefix("Skipped: ")
            row["skipped"][reason] = row["skipped"].get(reason, 0) + 1
        elif report.failed:
            row["failed"] += 1
        elif report.when == "call":
            row["passed"] += 1

    def lines(self) -> list[str]:
        """A line per algorithm and backend that compared something: calls, worst fraction, and
        the capabilities it lacks."""
        sums: dict[tuple[str, str], dict[str, Any]] = {}
        for (algorithm, backend, dtype, device), row in sorted(self.rows.items()):
            if not (row["calls_compared"] or row["elements"]):
                continue
            new = {"calls": 0, "worst": 0.0, "at": "", "has": {}}
            total = sums.setdefault((algorithm, backend), new)
            total["calls"] += row["calls_compared"]
            total["has"] = merged([total["has"], row["capabilities"]])
            if row["worst_fraction"] >= total["worst"]:
                total["worst"], total["at"] = row["worst_fraction"], f"{dtype} {device}"
        return [
            f"parity: {algorithm} {backend}: {total['calls']} calls compared, worst error "
            f"{total['worst']:.3g} of the allowance ({total['at']})"
            + (f"; lacks {', '.join(lacked(total['has']))}" if lacked(total["has"]) else "")
            for (algorithm, backend), total in sums.items()
        ]

    def write(self, path: Path, config: pytest.Config) -> None:
        """The JSON report at `path` (its folder made where missing)."""
        rows = [
            {"algorithm": a, "backend": b, "dtype": d, "device": v, **row}
            for (a, b, d, v), row in sorted(self.rows.items())
        ]
        report = {
            "format": FORMAT,
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": commit(config.rootpath),
            "seed": seed(config),
            "versions": versions(),
            "rows": rows,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def seed(config: pytest.Config) -> dict[str, Any]:
    """What the draws came from: hypothesis's seed where given, and its profile."""
    from hypothesis import settings

    return {
        "hypothesis_seed": config.getoption("hypothesis_seed", None),
        "profile": getattr(settings, "_current_profile", None),
        "derandomize": getattr(settings.default, "derandomize", False),
    }


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in VERSIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def commit(root: Path) -> str | None:
    """The commit checked out at `root` (``+dirty`` where files changed since), or None."""
    try:
        run = [["git", "rev-parse", "HEAD"], ["git", "status", "--porcelain", "--untracked=no"]]
        head, changes = (
            subprocess.run(
                command, cwd=root, capture_output=True, text=True, check=True, timeout=30
            ).stdout.strip()
            for command in run
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if changes else "")


def report_path(config: pytest.Config, environ: Mapping[str, str]) -> Path | None:
    """Where the run writes its report (`--parity-report`, else ``$PARITY_REPORT``), or None."""
    given = config.getoption("parity_report", None) or environ.get("PARITY_REPORT", "")
    if not given:
        return None
    path = Path(given)
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path
