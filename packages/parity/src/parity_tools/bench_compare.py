"""How `bench.py`'s timings moved since an earlier run: a baseline saved per git commit, and the
ratio of every row both runs share.

    parity bench --save-baseline    # on the commit to compare against (e.g. main)
    parity bench --compare main     # later, on your branch: a commit, or a results.json

A baseline is a results.json kept in bench-results/baselines/, named by the commit it timed, so
that `--compare` takes any name git knows (`main`, `HEAD~3`, a tag). It stays on this machine
(bench-results/ is ignored by git) because timings from another machine, or with other threads,
compare the machines rather than the code: the comparison lists any setting that differs.

Why not asv (airspeed velocity), the usual tool for this? asv times its own benchmark suite, in an
environment it builds per commit; here the inputs come from the tests' `benchmark_inputs`, and an
environment per commit reinstalls torch each time (a large download, impossible offline).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from . import bench_report
from .bench_report import Row, duration, enough_samples

# The row's identity, and the settings that change a timing without any change to the code.
KEY = ("function", "backend", "device", "mode", "size")
SETTINGS = ("cpu", "usable_cpus", "torch_threads", "gpu", "python", "versions")


def git(root: Path, *args: str) -> str | None:
    """git's output in `root`, or None where git or the repository is missing."""
    try:
        found = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return found.stdout.strip()


def commit(root: Path) -> dict[str, Any]:
    """The commit the code was timed at, and whether tracked files differ from it."""
    head = git(root, "rev-parse", "HEAD")
    changes = git(root, "status", "--porcelain", "--untracked-files=no")
    return {"commit": head, "dirty": bool(changes)}


def check_baseline(code: dict[str, Any]) -> None:
    """ValueError, saying what to do, where a run could not be a commit's baseline."""
    if code["commit"] is None:
        msg = "--save-baseline: not a git repository (keep results.json and --compare its path)"
        raise ValueError(msg)
    if code["dirty"]:
        msg = (
            "--save-baseline: tracked files have uncommitted changes, so this run would time no "
            "commit: commit or stash them first (or keep results.json and --compare its path)"
        )
        raise ValueError(msg)


def save_baseline(results: dict[str, Any], folder: Path) -> Path:
    """Keep `results` as the baseline of the commit they timed (`check_baseline` passed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{results['git']['commit']}.json"
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return path


def find(reference: str, root: Path, folder: Path) -> dict[str, Any]:
    """An earlier run: the results.json at path `reference`, else the baseline saved for the
    commit git calls `reference`. ValueError with what to do when there is neither."""
    path = Path(reference)
    if not path.is_file():
        head = git(root, "rev-parse", "--verify", "--quiet", f"{reference}^0")
        if head is None:
            msg = f"--compare {reference}: neither a file nor a commit git knows"
            raise ValueError(msg)
        path = folder / f"{head}.json"
        if not path.is_file():
            saved = [name.stem[:12] for name in sorted(folder.glob("*.json"))]
            msg = (
                f"--compare {reference}: no baseline saved for commit {head[:12]} (saved: "
                f"{', '.join(saved) or 'none'}). Save one there: git switch --detach "
                f"{reference} && parity bench --save-baseline, then switch back"
            )
            raise ValueError(msg)
    try:
        results: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        msg = f"--compare {reference}: cannot read {path} ({error})"
        raise ValueError(msg) from None
    if isinstance(results, dict) and isinstance(results.get("rows"), list):
        return results
    msg = f"--compare {reference}: {path} is not a results.json written by parity bench"
    raise ValueError(msg)


def verdict(old: Row, new: Row, threshold: float) -> str:
    """`slower` or `faster` where the median moved by more than `threshold` (a fraction) and the
    two interquartile ranges do not overlap (where either row has too few samples for one, the
    ratio alone decides); `same` otherwise: noise alone does not count."""
    ratio = new["median_s"] / old["median_s"]
    spread = enough_samples(new) and enough_samples(old)
    if ratio > 1 + threshold and (new["q1_s"] > old["q3_s"] or not spread):
        return "slower"
    if ratio < 1 / (1 + threshold) and (new["q3_s"] < old["q1_s"] or not spread):
        return "faster"
    return "same"


def compare(old: dict[str, Any], new: dict[str, Any], threshold: float) -> dict[str, Any]:
    """Per row both runs have: the two medians, their ratio (new over old: above 1, slower) and
    the verdict; the changes in words; and the settings that differ between the runs."""
    before = {tuple(row[key] for key in KEY): row for row in old["rows"]}
    rows, changes = [], []
    for row in new["rows"]:
        previous = before.get(tuple(row[key] for key in KEY))
        if previous is None:
            continue
        ratio = row["median_s"] / previous["median_s"]
        moved = verdict(previous, row, threshold)
        where = dict(zip(KEY, (row[key] for key in KEY), strict=True))
        rows.append({**where, "old_s": previous["median_s"], "new_s": row["median_s"]})
        rows[-1] |= {"ratio": ratio, "verdict": moved}
        if moved != "same":
            what = " ".join(str(row[key]) for key in KEY[:-1]) + f" size {row['size']:,}"
            times = f"{duration(previous['median_s'])} -> {duration(row['median_s'])}"
            few = f"; too few samples (under {bench_report.MIN_SAMPLES}) to compare IQRs"
            few = "" if enough_samples(row) and enough_samples(previous) else few
            changes.append(f"{what}: {moved}, {ratio:.2f}x the time ({times}{few})")
    differ = {
        name: (old["machine"].get(name), new["machine"].get(name))
        for name in SETTINGS
        if old["machine"].get(name) != new["machine"].get(name)
    }
    return {
        "against": old.get("git", {}).get("commit") or old["machine"]["date"],
        "threshold": threshold,
        "rows": rows,
        "changes": changes,
        "settings_differ": {name: list(values) for name, values in differ.items()},
    }


def lines(comparison: dict[str, Any]) -> list[str]:
    """The comparison in words: the per-row ratios as a table, then what changed."""
    threshold = comparison["threshold"]
    found = [f"Against the earlier run ({str(comparison['against'])[:12]}), new time / old time:"]
    found += [""] if comparison["rows"] else ["no rows in common"]
    table = [["function", "backend", "device", "mode", "size", "old", "new", "ratio", ""]]
    for row in comparison["rows"]:
        where = [str(row[key]) for key in KEY[:-1]] + [f"{row['size']:,}"]
        times = [duration(row["old_s"]), duration(row["new_s"]), f"{row['ratio']:.2f}x"]
        table.append([*where, *times, "" if row["verdict"] == "same" else row["verdict"]])
    if comparison["rows"]:
        widths = [max(len(line[column]) for line in table) for column in range(len(table[0]))]
        found += [
            "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in table
        ]
    found += ["", f"Changes of more than {threshold:.0%} beyond both IQRs:"]
    found += comparison["changes"] or [f"none in the {len(comparison['rows'])} rows both runs have"]
    for name, (old, new) in comparison["settings_differ"].items():
        found.append(f"The runs differ in {name}: {old}, then {new}; the ratios show that too.")
    return found
